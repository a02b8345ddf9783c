import { parsePayloadV1 as parsePayload } from '../../src/signer/payload';
import { payloadHash } from '../../src/signer/payload-json';
import { SignerError } from '../../src/util/errors';
import { keypair, payload, randomAddress, transferInstruction, type PayloadInstruction } from '../support/payloads';

const payer = randomAddress();
const base = () => payload(payer, [transferInstruction(payer, randomAddress(), 1000)]);

function parseError(input: unknown): string {
  try {
    parsePayload(input);
  } catch (e) {
    expect(e).toBeInstanceOf(SignerError);
    expect((e as SignerError).code).toBe('payload_invalid');
    return (e as Error).message;
  }
  throw new Error('expected a parse error');
}

describe('payload v1', () => {
  it('parses a transfer payload and keeps summary and warnings', () => {
    const p = parsePayload({ ...base(), summary: 'fund', warnings: ['w'] });
    expect(p.feePayer).toBe(payer);
    expect(p.instructions).toHaveLength(1);
    expect(p.instructions[0]!.data).toHaveLength(12);
    expect(p.summary).toBe('fund');
    expect(p.warnings).toEqual(['w']);
  });

  it('accepts the payload as JSON text, as the CLI reads it', () => {
    expect(parsePayload(JSON.stringify(base())).feePayer).toBe(payer);
  });

  it('hashes canonically: key order and whitespace do not matter', () => {
    const a = { version: 1, transaction: { instructions: [], fee_payer: payer }, summary: 's' };
    const b: unknown = JSON.parse(
      `{ "summary": "s", "transaction": { "fee_payer": "${payer}", "instructions": [] }, "version": 1 }`,
    );
    expect(payloadHash(a)).toBe(payloadHash(b));
    expect(payloadHash(a)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('hashes the same with and without partial signers', () => {
    const p = base();
    const withPartials = { ...p, partial_signers: [keypair().base64] };
    expect(payloadHash(withPartials)).toBe(payloadHash(p));
    expect(parsePayload(withPartials).hash).toBe(parsePayload(p).hash);
  });

  it('derives a partial signer pubkey from its keypair', () => {
    const kp = keypair();
    expect(parsePayload({ ...base(), partial_signers: [kp.base64] }).partialSigners[0]!.pubkey).toBe(kp.pubkey);
  });

  it.each([['{not json', 'payload is not valid JSON']])('rejects text that is not JSON', (text, message) => {
    expect(parseError(text)).toBe(message);
  });

  it('rejects each malformed partial signer with its own message', () => {
    expect(parseError({ ...base(), partial_signers: 'x' })).toBe('partial_signers must be an array');
    expect(parseError({ ...base(), partial_signers: [1] })).toBe('partial_signers must be strings');
    expect(parseError({ ...base(), partial_signers: ['not base64!'] })).toBe('partial signer 0 is not base64');
    expect(parseError({ ...base(), partial_signers: [Buffer.from('not-a-key').toString('base64')] })).toBe(
      'partial signer 0 is not a 64-byte keypair',
    );
  });

  it("rejects a keypair whose public half is not its secret's", () => {
    const a = keypair();
    const b = keypair();
    const forged = Buffer.concat([a.bytes.subarray(0, 32), b.bytes.subarray(32)]).toString('base64');
    expect(parseError({ ...base(), partial_signers: [forged] })).toBe('partial signer 0 is not a 64-byte keypair');
  });

  it('rejects other versions, shapes and addresses', () => {
    expect(parseError({ ...base(), version: 3 })).toBe(
      'unsupported payload version 3 (versions 1 and 2, and "message", are accepted)',
    );
    expect(parseError({ ...base(), version: 2 })).toMatch(/transaction must be a base64 wire transaction/);
    expect(parseError([])).toMatch(/^payload has an unexpected shape/);
    expect(parseError({ version: 1 })).toMatch(/^payload has an unexpected shape/);
    expect(parseError(payload(payer, []))).toBe('payload has no instructions');
    expect(parseError(payload('nope', [transferInstruction(payer, payer, 1)]))).toMatch(
      /^fee_payer: invalid address "nope"/,
    );
    const ix = transferInstruction(payer, payer, 1);
    expect(parseError(payload(payer, [{ ...ix, data: [256] }]))).toMatch(/data must be an array of integers 0-255/);
    expect(parseError(payload(payer, [{ ...ix, accounts: [{ pubkey: payer, is_signer: true }] as never }]))).toMatch(
      /needs pubkey, is_signer and is_writable/,
    );
  });

  it('never echoes a long string from a bad address field (it could be a secret)', () => {
    const secretish = keypair().base64;
    const message = parseError(payload(secretish, [transferInstruction(payer, payer, 1)]));
    expect(message).not.toContain(secretish.slice(0, 20));
  });
});

import { parseZinkAmount, transferPayload } from '../../src/signer/transfer';

describe('funding payloads', () => {
  it.each([
    ['1', 1_000_000_000n],
    ['0.05', 50_000_000n],
    ['2.5', 2_500_000_000n],
    ['.5', 500_000_000n],
    ['0.000000001', 1n],
    ['18446744073.709551615', 18_446_744_073_709_551_615n],
  ])('parses %s ZINK exactly', (text, lamports) => {
    expect(parseZinkAmount(text)).toBe(lamports);
  });

  it.each(['', '.', '0', '0.0', '-1', '1e3', '1.0000000001', 'abc', '1.2.3', '18446744073.709551616'])(
    'rejects %j',
    (text) => {
      expect(() => parseZinkAmount(text)).toThrow(/amount/);
    },
  );

  it('builds a payload that parses, with the lamports in bytes 4.. of the data', () => {
    const from = randomAddress();
    const to = randomAddress();
    const p = parsePayload(transferPayload({ from, to, lamports: 123_456n, summary: 'fund' }));
    expect(p.feePayer).toBe(from);
    expect(Buffer.from(p.instructions[0]!.data).readBigUInt64LE(4)).toBe(123_456n);
    expect(p.partialSigners).toEqual([]);
  });
});

import { getTransactionDecoder } from '@solana/kit';
import { compileLegacyMessage, serializeTransaction } from '../../src/signer/compile';
import { PAYLOAD_LIMITS } from '../../src/signer/payload-limits';

describe('payload bounds: what a 1232-byte transaction can carry, checked before any key is decoded', () => {
  const blockhash = randomAddress();
  const program = randomAddress();
  /** Serialises the parsed payload as the signer would (unsigned slots) and returns its size on the wire. */
  const wireSize = (raw: Record<string, unknown>): number => {
    const p = parsePayload(raw);
    const wire = serializeTransaction(compileLegacyMessage(p.feePayer, p.instructions, blockhash), new Map());
    expect(getTransactionDecoder().decode(wire).messageBytes.length).toBeGreaterThan(0);
    return wire.length;
  };
  const bare = (extra: Partial<Pick<PayloadInstruction, 'accounts' | 'data'>> = {}): PayloadInstruction => ({
    program_id: program,
    accounts: [],
    data: [],
    ...extra,
  });

  it('derives the limits from the packet size', () => {
    expect(PAYLOAD_LIMITS).toMatchObject({
      transactionSigners: 12,
      payloadSigners: 11,
      partialSigners: 10,
      instructions: 355,
      accountsPerInstruction: 1062,
      dataBytesPerInstruction: 1062,
      summaryChars: 512,
      warnings: 16,
      warningChars: 256,
    });
  });

  it('11 signers (the key and 10 partial signers) fit in a transaction; a 12th does not', () => {
    const partials = Array.from({ length: 10 }, () => keypair());
    const signerAccounts = partials.map((k) => ({ pubkey: k.pubkey, is_signer: true, is_writable: true }));
    const eleven = payload(payer, [bare({ accounts: signerAccounts })], {
      partial_signers: partials.map((k) => k.base64),
    });
    expect(wireSize(eleven)).toBeLessThanOrEqual(1232);
    expect(parsePayload(eleven).partialSigners.map((s) => s.pubkey)).toEqual(partials.map((k) => k.pubkey));

    const thirteen = payload(payer, [
      bare({ accounts: [...signerAccounts, { pubkey: randomAddress(), is_signer: true, is_writable: false }] }),
    ]);
    expect(parseError(thirteen)).toMatch(
      /^transaction\.instructions\[0\]: the transaction needs at least 1\d{3} bytes/,
    );
  });

  it('refuses an 11th partial signer by count, before looking at what the strings hold', () => {
    const garbage = Array.from({ length: 11 }, () => 'x');
    expect(parseError({ ...base(), partial_signers: garbage })).toBe(
      'partial_signers has 11 entries; at most 10 fit in a transaction',
    );
  });

  it('355 empty instructions fill a transaction exactly; 356 are refused by count', () => {
    const ixs = Array.from({ length: 355 }, () => bare());
    expect(wireSize(payload(payer, ixs))).toBe(1232);
    expect(parseError(payload(payer, [...ixs, bare()]))).toBe(
      'transaction.instructions has 356 entries; at most 355 fit in a transaction',
    );
  });

  it('1062 account references in one instruction fill a transaction exactly; 1063 are refused', () => {
    const meta = { pubkey: payer, is_signer: false, is_writable: false };
    expect(wireSize(payload(payer, [bare({ accounts: Array.from({ length: 1062 }, () => meta) })]))).toBe(1232);
    expect(parseError(payload(payer, [bare({ accounts: Array.from({ length: 1063 }, () => meta) })]))).toBe(
      'transaction.instructions[0].accounts has 1063 entries; at most 1062 fit in a transaction',
    );
  });

  it('1062 data bytes in one instruction fill a transaction exactly; 1063 are refused', () => {
    expect(wireSize(payload(payer, [bare({ data: new Array<number>(1062).fill(1) })]))).toBe(1232);
    expect(parseError(payload(payer, [bare({ data: new Array<number>(1063).fill(1) })]))).toBe(
      'transaction.instructions[0].data has 1063 bytes; at most 1062 fit in a transaction',
    );
  });

  it('refuses lists that each fit but together do not, naming the instruction where the packet overflows', () => {
    const half = () => bare({ data: new Array<number>(600).fill(1) });
    expect(parseError(payload(payer, [half(), half()]))).toBe(
      'transaction.instructions[1]: the transaction needs at least 1374 bytes up to here; a transaction must fit in 1232 bytes',
    );
  });

  it('bounds the summary to 512 characters', () => {
    expect(parsePayload({ ...base(), summary: 's'.repeat(512) }).summary).toHaveLength(512);
    expect(parseError({ ...base(), summary: 's'.repeat(513) })).toBe('summary has 513 characters; at most 512');
  });

  it('bounds warnings to 16 of 256 characters', () => {
    const full = Array.from({ length: 16 }, () => 'w'.repeat(256));
    expect(parsePayload({ ...base(), warnings: full }).warnings).toEqual(full);
    expect(parseError({ ...base(), warnings: [...full, 'w'] })).toBe('warnings has 17 entries; at most 16');
    expect(parseError({ ...base(), warnings: ['ok', 'w'.repeat(257)] })).toBe(
      'warnings[1] has 257 characters; at most 256',
    );
  });

  it('bounds the whole JSON value, unknown fields included, before hashing it', () => {
    expect(parseError({ ...base(), padding: new Array<number>(9000).fill(0) })).toBe(
      'payload has more than 8192 JSON values; a transaction needs far fewer',
    );
    let deep: unknown = 0;
    for (let i = 0; i < 20; i++) deep = [deep];
    expect(parseError({ ...base(), padding: deep })).toBe('payload nests deeper than 16 levels');
    // Unknown fields a builder sends within the bounds are still accepted and hashed.
    expect(parsePayload({ ...base(), game_address: randomAddress() }).hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('never echoes an over-long address field and refuses it before decoding anything', () => {
    const secretish = 'A'.repeat(88);
    const message = parseError(
      payload(payer, [bare({ accounts: [{ pubkey: secretish, is_signer: false, is_writable: false }] })]),
    );
    expect(message).toBe('account: invalid address of 88 characters: not a base58 32-byte public key');
  });

  it('checks sizes before decoding keys or importing keypairs', () => {
    const forged = Buffer.concat([keypair().bytes.subarray(0, 32), keypair().bytes.subarray(32)]).toString('base64');
    // A forged keypair and a bad fee payer lose to a list that is too long: sizes are checked first.
    const tooMany = payload(
      'nope',
      Array.from({ length: 356 }, () => bare()),
      { partial_signers: [forged] },
    );
    expect(parseError(tooMany)).toMatch(/^transaction\.instructions has 356 entries/);
    // Addresses are decoded before keypairs are imported.
    expect(parseError(payload('nope', [bare()], { partial_signers: [forged] }))).toMatch(/^fee_payer: invalid address/);
  });

  it('refuses the largest hostile payloads without walking any list past its bound', () => {
    // Each hostile list counts the elements read from it: a parser that checked the length first reads none
    // or a few, one that walked the list reads thousands. Counting work, not time, keeps this true on a busy
    // machine.
    let reads = 0;
    const counted = <T>(items: T[]): T[] =>
      new Proxy(items, {
        get(target, prop, receiver) {
          if (typeof prop === 'string' && /^\d+$/.test(prop)) reads += 1;
          return Reflect.get(target, prop, receiver) as unknown;
        },
      });
    const kp = keypair().base64;
    const hostile = [
      () => ({ ...base(), partial_signers: counted(new Array<string>(11_000).fill(kp)) }),
      () => payload(payer, [bare({ data: counted(new Array<number>(400_000).fill(1)) })]),
      () =>
        payload(payer, [
          bare({ accounts: counted(new Array(20_000).fill({ pubkey: payer, is_signer: true, is_writable: true })) }),
        ]),
      () => payload(payer, counted(Array.from({ length: 50_000 }, () => bare()))),
      () => ({ ...base(), warnings: counted(new Array<string>(100_000).fill('w')) }),
    ];
    for (const make of hostile) {
      const input = make();
      reads = 0;
      expect(parseError(input)).toBeTruthy();
      expect(reads).toBeLessThan(300);
    }
  });
});
