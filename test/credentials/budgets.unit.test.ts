/**
 * A block's daily budget as a credential states it (`check if per_day_lamports(N)`): written by narrowing, read by
 * the verifier per block with its revocation id, stated back so the check holds, and any other use of the predicate
 * refused (it would hold without binding anything). The budget itself is judged at the gate (policy core).
 */
import { mintRoot, narrowCredential } from '../../src/credentials/issue';
import { createCredentialVerifier } from '../../src/credentials/verifier';
import { budgetOf } from '../../src/credentials/vocabulary';
import { appendRaw, lib, made, NOW, root, verifier } from './planner-root';

const SOL_DAY = 1_000_000_000;
const SIGN = { method: 'tools/call', tool: 'sign', key: 'demo', mode: 'send' };

test('narrowing writes the budget; the verifier reads each block budget with its revocation id and allows the request', () => {
  const child = narrowCredential(lib, made.credential, root.publicKey, { perDayLamports: 100_000_000 });
  const grand = narrowCredential(lib, child.credential, root.publicKey, { mode: 'sign_only' });
  const v = verifier.verify(grand.credential);
  if (!v.ok) throw new Error(v.refusal.message);
  expect(v.credential.checks[1]).toEqual(['check if per_day_lamports(100000000)']);
  expect(v.credential.budgets).toEqual([
    { block: 1, revocation_id: child.revocationId, per_day_lamports: 100_000_000, per_day_usd_micros: null },
  ]);
  expect(v.credential.authorize({ ...SIGN, mode: 'sign_only' }, NOW)).toBeNull();
  expect(v.credential.authorize({ ...SIGN, spend: { lamports_out: 5, destinations: [] } }, NOW)).toMatchObject({
    block: 2, // the grandchild's mode check, not the budget
  });
  v.credential.dispose();
});

test('two budgets in one block: the smallest binds; budgets of several blocks are each kept', () => {
  const child = narrowCredential(lib, made.credential, root.publicKey, { perDayLamports: 500 });
  const twice = appendRaw(child.credential, 'check if per_day_lamports(300);\ncheck if per_day_lamports(200);\n');
  const v = verifier.verify(twice);
  if (!v.ok) throw new Error(v.refusal.message);
  expect(v.credential.budgets.map((b) => [b.block, b.per_day_lamports])).toEqual([
    [1, 500],
    [2, 200],
  ]);
  expect(v.credential.authorize(SIGN, NOW)).toBeNull();
  v.credential.dispose();
});

test.each([
  ['a budget read from a variable', 'check if per_day_lamports($n), $n > 5;'],
  ['a budget under reject', 'reject if per_day_lamports(10);'],
  ['a budget beside another fact', 'check if per_day_lamports(10), time($t);'],
  ['a budget too large to count exactly', 'check if per_day_lamports(9999999999999999);'],
])('%s is refused as a block the signer cannot keep', (_, code) => {
  const v = verifier.verify(appendRaw(made.credential, code));
  expect(v.ok).toBe(false);
  if (!v.ok) expect(v.refusal).toMatchObject({ reason: 'block', block: 1 });
});

test('budgetOf reads only the exact form', () => {
  expect(budgetOf('check if per_day_lamports(0)')).toBe(0);
  expect(budgetOf('check if per_day_lamports(12)')).toBe(12);
  expect(budgetOf('reject if lamports_out($n), $n > 12')).toBeNull();
  expect(budgetOf('check if per_day_lamports(-1)')).toBeNull();
});

test("a root issued with a daily budget states it in its own block: the whole tree's budget, block 0", () => {
  const budgeted = mintRoot(lib, root.privateKey, { name: 'planner', keys: ['demo'], perDayLamports: SOL_DAY });
  const v = createCredentialVerifier(lib, {
    rootPublicKey: root.publicKey,
    issued: [{ name: 'planner', revocation_id: budgeted.revocationId, keys: ['demo'] }],
    revoked: [],
  }).verify(narrowCredential(lib, budgeted.credential, root.publicKey, { perDayLamports: SOL_DAY / 10 }).credential);
  if (!v.ok) throw new Error(v.refusal.message);
  expect(v.credential.budgets.map((b) => [b.block, b.per_day_lamports])).toEqual([
    [0, SOL_DAY],
    [1, SOL_DAY / 10],
  ]);
  expect(v.credential.authorize(SIGN, NOW)).toBeNull();
  v.credential.dispose();
});
