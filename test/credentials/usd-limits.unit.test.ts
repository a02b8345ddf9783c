/**
 * A credential's dollar limits as a block states them: `reject if usd_micros_out($n), $n > N` per transaction and
 * `check if per_day_usd_micros(N)` per day, N whole micro-dollars. Written by narrowing from dollars with cents (other
 * forms refused with the reason), read back by the verifier with the block's revocation id, judged on the valued
 * spend at its boundary, and a credential that limits dollars never lets an unvalued spend through.
 */
import { narrowCredential } from '../../src/credentials/issue';
import { presentedCredential } from '../../src/credentials/request';
import type { VerifiedCredential } from '../../src/credentials/verifier';
import { credentialSpendRefusal } from '../../src/signer/policy/rules/credential';
import { SYSTEM_PROGRAM } from '../../src/solana/programs';
import { policyKey } from '../signer/policy/fixtures';
import { appendRaw, lib, made, NOW, root, verified, verifier } from './planner-root';

const SIGN = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'sign', arguments: { key: 'demo' } } };
const DEST = '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin';

/** The spend rule on a 1000-lamport transfer valued at `usd` micro-dollars (null: the key is not priced). */
function judge(c: VerifiedCredential, usd: bigint | null) {
  const p = presentedCredential(c, SIGN, () => NOW);
  return credentialSpendRefusal(
    { check: p.spend, usdLimitedBy: p.usd_limited_by },
    policyKey({ name: 'demo' }),
    -1_000,
    [{ address: DEST, lamports: 1_000, created: false, owner: SYSTEM_PROGRAM }],
    usd === null ? null : { ok: true, usd, valued: [] },
  );
}

test('narrowing writes the dollar limits in micro-dollars; the verifier reads the budget with its block', () => {
  const child = narrowCredential(lib, made.credential, root.publicKey, { perTxUsd: '5.00', perDayUsd: '20.5' });
  const c = verified(child.credential);
  expect(c.checks[1]).toEqual(['reject if usd_micros_out($n), $n > 5000000', 'check if per_day_usd_micros(20500000)']);
  expect(c.budgets).toEqual([
    { block: 1, revocation_id: child.revocationId, per_day_lamports: null, per_day_usd_micros: 20_500_000n },
  ]);
  expect(c.usdLimitedBy).toBe(1);
  // The budget check holds (the signer states it kept), so the request itself passes.
  expect(c.authorize({ method: 'tools/call', tool: 'sign', key: 'demo' }, NOW)).toBeNull();
  c.dispose();
});

test.each([['5.001'], ['$5.00'], ['-1.00'], ['1e3'], ['5,00'], ['']])(
  'narrowing refuses %j as dollars, saying how to write them',
  (given) => {
    expect(() => narrowCredential(lib, made.credential, root.publicKey, { perTxUsd: given })).toThrow(
      /per-tx USD: .*(dollar|with cents)/,
    );
  },
);

test("whole dollars may omit the cents, as a key's `usd` caps may", () => {
  const c = verified(narrowCredential(lib, made.credential, root.publicKey, { perTxUsd: '5' }).credential);
  expect(c.checks[1]).toEqual(['reject if usd_micros_out($n), $n > 5000000']);
  c.dispose();
});

test('narrowing refuses a number for dollars (it could mean dollars or cents)', () => {
  expect(() => narrowCredential(lib, made.credential, root.publicKey, { perDayUsd: 20 as unknown as string })).toThrow(
    /per-day USD: write dollars as a string with cents, like "20.00"/,
  );
});

test('per transaction: a value equal to the limit passes; one micro-dollar over is refused with its figures', () => {
  const c = verified(narrowCredential(lib, made.credential, root.publicKey, { perTxUsd: '5.00' }).credential);
  expect(judge(c, 5_000_000n)).toBeNull();
  expect(judge(c, 5_000_001n)).toMatchObject({
    reason: 'credential_limit',
    figures: { requested: 1_000, usd_requested: '5.000001' },
  });
  expect(judge(c, 5_010_000n)?.message).toMatch(/block 1 .*usd_micros_out/);
  c.dispose();
});

test('a credential that limits dollars refuses an unpriced spend with a coded reason naming the block', () => {
  const child = narrowCredential(lib, made.credential, root.publicKey, { tools: ['sign'] });
  const grand = verified(narrowCredential(lib, child.credential, root.publicKey, { perDayUsd: '1.00' }).credential);
  expect(judge(grand, null)).toMatchObject({ reason: 'credential_unpriced', figures: { block: 2, requested: 1_000 } });
  grand.dispose();
  // Without dollar limits an unpriced key is judged in lamports as before.
  const plain = verified(child.credential);
  expect(plain.usdLimitedBy).toBeNull();
  expect(judge(plain, null)).toBeNull();
  plain.dispose();
});

test('a dollar check written by hand in the exact form binds too; another use of the budget predicate is refused', () => {
  const hand = verified(appendRaw(made.credential, 'reject if usd_micros_out($n), $n > 10000;'));
  expect(hand.usdLimitedBy).toBe(1);
  expect(judge(hand, 10_000n)).toBeNull();
  expect(judge(hand, 10_001n)).toMatchObject({ reason: 'credential_limit' });
  expect(judge(hand, null)).toMatchObject({ reason: 'credential_unpriced' });
  hand.dispose();
  const loose = verifier.verify(appendRaw(made.credential, 'check if per_day_usd_micros($n), $n > 5;'));
  expect(loose).toMatchObject({ ok: false, refusal: { reason: 'block' } });
});
