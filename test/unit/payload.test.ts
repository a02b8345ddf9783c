import { parsePayload, payloadHash } from '../../src/signer/payload';
import { SignerError } from '../../src/util/errors';
import { keypair, payload, randomAddress, transferInstruction } from '../support/payloads';

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
    const b = JSON.parse(
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
    expect(parseError({ ...base(), version: 2 })).toBe('unsupported payload version 2');
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
