/**
 * The property that makes narrowing safe to hand to agents: for any chain of narrowing blocks and any request, what
 * a child allows its parent allows too (a block only adds checks). Run with the real library over random chains.
 */
import fc from 'fast-check';
import { biscuitLib } from '../../src/credentials/biscuit-lib';
import { NARROW_MODES, type Narrowing } from '../../src/credentials/checks';
import { mintRoot, narrowCredential, newRootKey } from '../../src/credentials/issue';
import { createCredentialVerifier } from '../../src/credentials/verifier';
import { TOOLS, type CredentialRequest } from '../../src/credentials/vocabulary';

const lib = biscuitLib();
const root = newRootKey(lib);
const KEYS = ['demo', 'pay', 'other'];
const ADDRESSES = [
  '11111111111111111111111111111112',
  'So11111111111111111111111111111111111111112',
  'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA',
];
const NOW = Date.parse('2026-12-06T00:00:00Z');
const made = mintRoot(lib, root.privateKey, { name: 'planner', keys: ['demo', 'pay'] });
const verifier = createCredentialVerifier(lib, {
  rootPublicKey: root.publicKey,
  issued: [{ name: 'planner', revocation_id: made.revocationId, keys: ['demo', 'pay'] }],
  revoked: [],
});

const narrowing: fc.Arbitrary<Narrowing> = fc
  .record(
    {
      keys: fc.subarray(KEYS, { minLength: 1 }),
      tools: fc.subarray([...TOOLS], { minLength: 1 }),
      mode: fc.constantFrom(...NARROW_MODES),
      expiresAt: fc.integer({ min: -3600, max: 3600 }).map((s) => new Date(NOW + s * 1000)),
      perTxLamports: fc.integer({ min: 0, max: 3_000_000 }),
      destinations: fc.subarray(ADDRESSES, { minLength: 1 }),
      // Dollars with cents, as narrowing takes them ($0.00 to $20.00).
      perTxUsd: fc.integer({ min: 0, max: 2_000 }).map((cents) => (cents / 100).toFixed(2)),
      perDayUsd: fc.integer({ min: 0, max: 2_000 }).map((cents) => (cents / 100).toFixed(2)),
    },
    { requiredKeys: [] },
  )
  .filter((n) => Object.keys(n).length > 0);

const request: fc.Arbitrary<{ req: CredentialRequest; at: Date }> = fc.record({
  req: fc.oneof(
    fc.record({ method: fc.constantFrom('tools/list', 'server/discover') }),
    fc.record({
      method: fc.constant('tools/call'),
      tool: fc.constantFrom(...TOOLS),
      key: fc.constantFrom(...KEYS),
      mode: fc.constantFrom('send', 'sign_only'),
    }),
    // After a simulation: the same facts and the spend.
    fc.record({
      method: fc.constant('tools/call'),
      tool: fc.constantFrom('check', 'sign'),
      key: fc.constantFrom(...KEYS),
      spend: fc.record({
        lamports_out: fc.integer({ min: 0, max: 4_000_000 }),
        destinations: fc.subarray(ADDRESSES),
        usd_micros_out: fc.integer({ min: 0, max: 25_000_000 }),
      }),
    }),
  ),
  at: fc.integer({ min: -7200, max: 7200 }).map((s) => new Date(NOW + s * 1000)),
});

function allows(credential: string, req: CredentialRequest, at: Date): boolean {
  const v = verifier.verify(credential);
  if (!v.ok) throw new Error(v.refusal.message);
  try {
    return v.credential.authorize(req, at) === null;
  } finally {
    v.credential.dispose();
  }
}

test('what a narrowed credential allows, its parent allows too, down any chain', () => {
  fc.assert(
    fc.property(
      fc.array(narrowing, { minLength: 1, maxLength: 3 }),
      fc.array(request, { minLength: 1, maxLength: 6 }),
      (chain, requests) => {
        const credentials = [made.credential];
        for (const n of chain)
          credentials.push(narrowCredential(lib, credentials[credentials.length - 1]!, root.publicKey, n).credential);
        for (const { req, at } of requests) {
          const allowed = credentials.map((c) => allows(c, req, at));
          for (let i = 1; i < allowed.length; i++) if (allowed[i]) expect(allowed[i - 1]).toBe(true);
        }
      },
    ),
    { numRuns: 60 },
  );
});

test('the property can fail: a narrowing that names a key refuses what its parent allowed', () => {
  const child = narrowCredential(lib, made.credential, root.publicKey, { keys: ['pay'] }).credential;
  const req = { method: 'tools/call', tool: 'check', key: 'demo' };
  expect(allows(made.credential, req, new Date(NOW))).toBe(true);
  expect(allows(child, req, new Date(NOW))).toBe(false);
});
