/**
 * What the message check reads bytes as, without a chain: every transaction message version kit compiles and a
 * whole wire transaction are recognised, ordinary sign-in texts and off-chain messages are not, and off-chain
 * bytes must encode back to themselves.
 */
import {
  address,
  compileTransaction,
  compileTransactionMessage,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  getCompiledTransactionMessageEncoder,
  getOffchainMessageEncoder,
  offchainMessageApplicationDomain,
  offchainMessageContentRestrictedAsciiOf1232BytesMax,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  type Blockhash,
} from '@solana/kit';
import { readOffchain } from '../../../src/signer/message/offchain';
import { transactionLookalike } from '../../../src/signer/message/transaction-lookalike';
import { randomAddress } from '../../support/payloads';

const payer = address(randomAddress());
const lifetime = { blockhash: randomAddress() as Blockhash, lastValidBlockHeight: 10n };

function compiled(version: 'legacy' | 0 | 1): Uint8Array {
  const message = pipe(
    createTransactionMessage({ version }),
    (m) => setTransactionMessageFeePayer(payer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
  );
  return new Uint8Array(getCompiledTransactionMessageEncoder().encode(compileTransactionMessage(message)));
}

test.each([
  ['legacy', 'legacy' as const, 'a legacy transaction message'],
  ['v0', 0 as const, 'a v0 transaction message'],
  ['v1', 1 as const, 'a v1 transaction message'],
])('a %s transaction message is recognised, also with bytes after it', (_label, version, named) => {
  const bytes = compiled(version);
  expect(transactionLookalike(bytes)).toBe(named);
  expect(transactionLookalike(new Uint8Array([...bytes, 1, 2, 3]))).toBe(named);
});

test('a whole wire transaction is recognised', () => {
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayer(payer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
  );
  const wire = Buffer.from(getBase64EncodedWireTransaction(compileTransaction(message)), 'base64');
  expect(transactionLookalike(new Uint8Array(wire))).toMatch(/transaction/);
});

test('sign-in texts and off-chain messages are not transactions', () => {
  const siws = [
    'example.com wants you to sign in with your Solana account:',
    payer,
    '',
    'Sign in to the game.',
    '',
    'URI: https://example.com/login',
    'Version: 1',
    'Chain ID: mainnet',
    'Nonce: 32891756',
    'Issued At: 2026-12-02T03:00:00Z',
    'Resources:',
    '- https://example.com/terms',
  ].join('\n');
  const texts = [siws, 'hi', 'Sign in', 'a'.repeat(1232), 'ünïcödé '.repeat(100)];
  for (const text of texts) expect(transactionLookalike(new TextEncoder().encode(text))).toBeNull();
  const v0 = getOffchainMessageEncoder().encode({
    version: 0,
    applicationDomain: offchainMessageApplicationDomain(randomAddress()),
    content: offchainMessageContentRestrictedAsciiOf1232BytesMax('Log in'),
    requiredSignatories: [{ address: payer }],
  });
  const v1 = getOffchainMessageEncoder().encode({
    version: 1,
    content: 'Log in',
    requiredSignatories: [{ address: payer }],
  });
  for (const bytes of [v0, v1]) {
    expect(transactionLookalike(new Uint8Array(bytes))).toBeNull();
    expect(readOffchain(new Uint8Array(bytes))).toMatchObject({
      ok: true,
      view: { text: 'Log in', signatories: [payer] },
    });
  }
});

test('off-chain bytes that kit decodes but that do not encode back, or that break the format, are refused', () => {
  const v1 = new Uint8Array(
    getOffchainMessageEncoder().encode({ version: 1, content: 'Log in', requiredSignatories: [{ address: payer }] }),
  );
  expect(readOffchain(new Uint8Array([...v1, 0]))).toMatchObject({ ok: false });
  expect(readOffchain(new Uint8Array([...v1.subarray(0, v1.length - 1), 0xff]))).toMatchObject({ ok: false });
  // A signing domain with a version the format does not have.
  const v9 = Uint8Array.from(v1);
  v9[16] = 9;
  const read = readOffchain(v9);
  expect(read.ok).toBe(false);
  expect(read.ok ? '' : read.reason).toMatch(/not a valid off-chain message/);
  // Format 0 (restricted ASCII) holding a control character: kit's decoder refuses it.
  const ascii = new Uint8Array(
    getOffchainMessageEncoder().encode({
      version: 0,
      applicationDomain: offchainMessageApplicationDomain(randomAddress()),
      content: offchainMessageContentRestrictedAsciiOf1232BytesMax('Log in'),
      requiredSignatories: [{ address: payer }],
    }),
  );
  ascii[ascii.length - 1] = 0x1b;
  expect(readOffchain(ascii)).toMatchObject({ ok: false });
});
