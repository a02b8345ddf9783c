/**
 * The relay's pure parts: SEP-2243 value encoding (checked against the service's own decoder, so the two ends
 * agree), line splitting with the oversize bound, the top-level id scanner, and the event-stream parser.
 */
import fc from 'fast-check';
import { decodeHeaderValue, hasOnlyHeaderSafeChars } from '../../src/mcp/base64';
import { headerMatchesValue } from '../../src/mcp/headers';
import { encodeHeaderText, headerValueFor, isPlainHeaderSafe } from '../../src/relay/header-values';
import { LineSplitter, TopLevelIdScanner, type LineEvent } from '../../src/relay/lines';
import { SseParser } from '../../src/relay/sse';

describe('SEP-2243 value encoding', () => {
  test.each([
    ['Hello, 世界', '=?base64?SGVsbG8sIOS4lueVjA==?='],
    [' padded ', '=?base64?IHBhZGRlZCA=?='],
    ['line1\nline2', '=?base64?bGluZTEKbGluZTI=?='],
    ['us-west1', 'us-west1'],
    ['', ''],
    ['a b\tc', 'a b\tc'],
  ])("the spec's example %j is sent as %j", (value, header) => {
    expect(encodeHeaderText(value)).toBe(header);
  });

  test('a plain value that looks like the sentinel is encoded so it stays literal', () => {
    expect(isPlainHeaderSafe('=?base64?SGk=?=')).toBe(false);
    expect(decodeHeaderValue(encodeHeaderText('=?base64?SGk=?='))).toEqual({ ok: true, value: '=?base64?SGk=?=' });
  });

  test('integers are decimal, booleans lowercase, null and non-primitives omitted', () => {
    expect(headerValueFor(42)).toBe('42');
    expect(headerValueFor(-7)).toBe('-7');
    expect(headerValueFor(true)).toBe('true');
    expect(headerValueFor(false)).toBe('false');
    expect(headerValueFor(null)).toBeNull();
    expect(headerValueFor(undefined)).toBeNull();
    expect(headerValueFor({ a: 1 })).toBeNull();
    expect(headerValueFor(1.5)).toBeNull();
  });

  test("any string survives the round trip through the service's decoder and header check", () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        const header = encodeHeaderText(s);
        expect(hasOnlyHeaderSafeChars(header)).toBe(true);
        // What HTTP does to a header value in transit: surrounding whitespace is trimmed.
        const decoded = decodeHeaderValue(header.replace(/^[ \t]+|[ \t]+$/g, ''));
        expect(decoded).toEqual({ ok: true, value: s });
        if (decoded.ok) expect(headerMatchesValue(decoded.value, s)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('LineSplitter', () => {
  const collect = (max: number, chunks: (string | Buffer)[], end = true): LineEvent[] => {
    const out: LineEvent[] = [];
    const s = new LineSplitter(max, (e) => out.push(e));
    for (const c of chunks) s.push(Buffer.isBuffer(c) ? c : Buffer.from(c));
    if (end) s.end();
    return out;
  };
  const text = (events: LineEvent[]) =>
    events.map((e) => (e.kind === 'line' ? e.line.toString() : `<oversized ${e.bytes} ${String(e.id)}>`));

  test('splits on LF across chunk boundaries, drops a trailing CR, keeps a last line without newline', () => {
    expect(text(collect(100, ['ab', 'c\r\nde\n', '\nf']))).toEqual(['abc', 'de', '', 'f']);
  });

  test('a multi-byte character split across chunks arrives whole', () => {
    const bytes = Buffer.from('é\n');
    expect(text(collect(100, [bytes.subarray(0, 1), bytes.subarray(1)]))).toEqual(['é']);
  });

  test('a line over the limit is reported with its id and the next line still arrives', () => {
    const big = JSON.stringify({ jsonrpc: '2.0', id: 'big', method: 'x', params: { pad: 'y'.repeat(500) } });
    const after = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'x' });
    const events = collect(100, [big.slice(0, 50), big.slice(50, 300), `${big.slice(300)}\n${after}\n`]);
    expect(events[0]).toEqual({ kind: 'oversized', bytes: big.length, id: 'big' });
    expect(text(events.slice(1))).toEqual([after]);
  });
});

describe('TopLevelIdScanner', () => {
  const scan = (text: string) => {
    const s = new TopLevelIdScanner();
    s.feed(Buffer.from(text));
    return s.id();
  };
  test.each([
    ['{"jsonrpc":"2.0","id":17,"method":"m"}', 17],
    ['{"method":"m","params":{"id":"nested","a":[{"id":3}]},"id":"outer"}', 'outer'],
    ['{ "id" : -4 }', -4],
    ['{"id":"with \\"quote\\" and \\u00e9"}', 'with "quote" and é'],
    ['{"params":{"id":1}}', undefined],
    ['{"id":null}', undefined],
    ['{"id":1.5}', undefined],
    ['not json', undefined],
    ['{"key":"id","x":"id"}', undefined],
  ])('%s → %j', (text, id) => {
    expect(scan(text)).toEqual(id);
  });
});

describe('SseParser', () => {
  test('joins data lines, skips comments and other fields, handles CRLF and CR, dispatches at blank lines', () => {
    const got: string[] = [];
    const p = new SseParser((d) => got.push(d));
    p.push(Buffer.from(': ping\r\nevent: message\r\nid: 1\r\ndata: {"a":\r\ndata:1}\r\n\r\ndata: two\r'));
    p.push(Buffer.from('\rdata: three'));
    p.end();
    expect(got).toEqual(['{"a":\n1}', 'two', 'three']);
  });
});
