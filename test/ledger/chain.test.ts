import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import {
  GENESIS_PREV,
  exportJsonl,
  hashEntry,
  sealEntry,
  serializeEntry,
  verifyEntries,
  verifyJsonlFile,
} from '../../src/ledger/hash-chain';
import type { AuditEntry } from '../../src/ledger/types';
import { intentInput, signInput, containing } from './helpers';

function chainOf(n: number): AuditEntry[] {
  const out: AuditEntry[] = [];
  let prev = GENESIS_PREV;
  for (let i = 1; i <= n; i++) {
    const e = sealEntry(signInput({ ts: i, signature: `sig${i}`, balance_change: -i }), prev);
    out.push(e);
    prev = e.hash;
  }
  return out;
}

describe('canonical serialisation (docs/operations.md, "Audit log")', () => {
  it('writes compact JSON in the fixed field order whatever the object order, options as null', () => {
    const e = sealEntry(signInput({ ts: 1, programs: ['A', 'B'], summary: 's' }), GENESIS_PREV);
    const shuffled = Object.fromEntries(Object.entries(e).reverse()) as AuditEntry;
    const line = serializeEntry(shuffled);
    expect(line).toBe(
      `{"ts":1,"key":"game","command":"sign","payload_hash":"${'ab'.repeat(32)}","programs":["A","B"],"summary":"s",` +
        `"intent":null,"outcome":"confirmed","detail":null,"signature":null,"slot":null,"balance_change":null,` +
        `"prev":"${GENESIS_PREV}","hash":"${e.hash}"}`,
    );
  });

  it('escapes strings like serde_json: control characters as lowercase \\u00xx, non-ASCII and / left alone', () => {
    const e = sealEntry(signInput({ summary: 'a"b\\c\n\t\u001f/é☃' }), GENESIS_PREV);
    expect(serializeEntry(e)).toContain('"summary":"a\\"b\\\\c\\n\\t\\u001f/é☃"');
  });

  it('hashes the entry serialised with hash set to "", as sha256 hex', () => {
    const e = sealEntry(signInput({ ts: 42, balance_change: -5000 }), GENESIS_PREV);
    const expected = createHash('sha256')
      .update(serializeEntry({ ...e, hash: '' }))
      .digest('hex');
    expect(e.hash).toBe(expected);
    expect(hashEntry(e)).toBe(expected);
    expect(e.prev).toBe('0'.repeat(64));
  });

  it('drops stray properties of the input instead of hashing them', () => {
    const input = { ...signInput(), secret: 'x' } as ReturnType<typeof signInput>;
    const e = sealEntry(input, GENESIS_PREV);
    expect(Object.keys(e)).not.toContain('secret');
  });
});

describe('verifyEntries', () => {
  it('accepts three chained entries as ok: 3', async () => {
    expect(await verifyEntries(chainOf(3))).toEqual({ ok: true, entries: 3 });
  });

  it('names the line whose content no longer matches its hash', async () => {
    const entries = chainOf(3);
    entries[1] = { ...entries[1]!, ts: 9 };
    expect(await verifyEntries(entries)).toEqual({
      ok: false,
      entries: 2,
      line: 2,
      reason: 'broken: line 2: hash does not match its content',
    });
  });

  it('names the line whose prev does not link to the entry before (a removed entry)', async () => {
    const entries = chainOf(4);
    entries.splice(1, 1);
    const r = await verifyEntries(entries);
    expect(r).toMatchObject({ ok: false, line: 2, reason: 'broken: line 2: prev does not match the previous entry' });
  });

  it('accepts an empty chain', async () => {
    expect(await verifyEntries([])).toEqual({ ok: true, entries: 0 });
  });
});

describe('JSONL export and verifyJsonlFile', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'ledger-jsonl-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('exports one compact line per entry, mode 0600, and the file verifies', async () => {
    const file = path.join(dir, 'audit.jsonl');
    expect(await exportJsonl(chainOf(3), file)).toBe(3);
    const lines = readFileSync(file, 'utf8').split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[3]).toBe('');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(await verifyJsonlFile(file)).toEqual({ ok: true, entries: 3 });
  });

  it('detects "ts":1 edited to "ts":9 in the file (audit.rs)', async () => {
    const file = path.join(dir, 'audit.jsonl');
    await exportJsonl(chainOf(3), file);
    writeFileSync(file, readFileSync(file, 'utf8').replace('"ts":1,', '"ts":9,'));
    expect(await verifyJsonlFile(file)).toMatchObject({
      ok: false,
      line: 1,
      reason: 'broken: line 1: hash does not match its content',
    });
  });

  it('reports an unparseable line by its number', async () => {
    const file = path.join(dir, 'audit.jsonl');
    await exportJsonl(chainOf(3), file);
    const lines = readFileSync(file, 'utf8').split('\n');
    lines[2] = lines[2]!.slice(0, 40); // a cut-off fragment
    writeFileSync(file, lines.join('\n'));
    expect(await verifyJsonlFile(file)).toMatchObject({ ok: false, line: 3, reason: 'audit line 3 is not valid JSON' });
  });

  it('reports a valid JSON line that is not an audit entry', async () => {
    const file = path.join(dir, 'audit.jsonl');
    writeFileSync(file, '{"ts":1}\n');
    expect(await verifyJsonlFile(file)).toMatchObject({
      ok: false,
      line: 1,
      reason: 'audit line 1 is not an audit entry',
    });
  });

  it('rejects a missing file with a ledger error naming it', async () => {
    const file = path.join(dir, 'nope.jsonl');
    await expect(verifyJsonlFile(file)).rejects.toMatchObject({
      code: 'ledger',
      message: containing(file),
    });
  });
});

describe("a token figure's delegated accounts (docs/treasury.md)", () => {
  const figure = { mint: 'M', decimals: 6, change: '-5', credits: [{ owner: 'O', amount: '5' }] };
  it('leaves a figure without them hashed as before, and hashes them after the credits when present', () => {
    const plain = serializeEntry(sealEntry(intentInput({ tokens: [figure] }), GENESIS_PREV));
    expect(plain).toContain(
      '"tokens":[{"mint":"M","decimals":6,"change":"-5","credits":[{"owner":"O","amount":"5"}]}]',
    );
    expect(plain).not.toContain('delegated');
    const delegated = [{ change: '-5', account: 'A' }];
    const line = serializeEntry(sealEntry(intentInput({ tokens: [{ ...figure, delegated }] }), GENESIS_PREV));
    expect(line).toContain('"credits":[{"owner":"O","amount":"5"}],"delegated":[{"account":"A","change":"-5"}]}]');
  });

  it('breaks the chain when an account or its change is edited', async () => {
    const e = sealEntry(
      intentInput({ tokens: [{ ...figure, delegated: [{ account: 'A', change: '-5' }] }] }),
      GENESIS_PREV,
    );
    expect(await verifyEntries([e])).toEqual({ ok: true, entries: 1 });
    const edited = { ...e, tokens: [{ ...figure, delegated: [{ account: 'B', change: '-5' }] }] };
    expect(await verifyEntries([edited])).toMatchObject({ ok: false, line: 1 });
  });
});
