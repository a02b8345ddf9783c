/**
 * A credential's per-mint limit as a block states it: `reject if token_out("MINT", $n), $n > N`, N base units of that
 * mint. Written by narrowing (the mint and the figure checked), shown back by key_show's view, and judged with the
 * real Biscuit library on the simulation's token movements at the boundary; other mints and a spend of none pass.
 */
import { credentialLimits } from '../../src/credentials/limits';
import { narrowCredential } from '../../src/credentials/issue';
import { presentedCredential } from '../../src/credentials/request';
import type { VerifiedCredential } from '../../src/credentials/verifier';
import { credentialSpendRefusal } from '../../src/signer/policy/rules/credential';
import { SYSTEM_PROGRAM } from '../../src/solana/programs';
import { policyKey } from '../signer/policy/fixtures';
import { lib, made, NOW, root, verified } from './planner-root';

const SIGN = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'sign', arguments: { key: 'demo' } } };
const DEST = '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin';
const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const OTHER = 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB';

/** The spend rule on a transaction that moves `out` base units of each mint out of the key (and 5000 lamports of fee). */
function judge(c: VerifiedCredential, out: Record<string, bigint>) {
  const p = presentedCredential(c, SIGN, () => NOW);
  return credentialSpendRefusal(
    { check: p.spend, usdLimitedBy: p.usd_limited_by },
    policyKey({ name: 'demo' }),
    -5_000,
    [{ address: DEST, lamports: 0, created: false, owner: SYSTEM_PROGRAM }],
    null,
    Object.entries(out).map(([mint, n]) => ({ mint, keyChange: -n, credits: new Map() })),
  );
}

const narrowed = (perTxTokens: { mint: string; amount: number }[]) =>
  verified(narrowCredential(lib, made.credential, root.publicKey, { perTxTokens }).credential);

test('narrowing writes one check per mint, and key_show shows the smallest limit of each', () => {
  const c = narrowed([{ mint: USDC, amount: 5_000_000 }]);
  expect(c.checks[1]).toEqual([`reject if token_out("${USDC}", $n), $n > 5000000`]);
  const tighter = verified(
    narrowCredential(
      lib,
      narrowCredential(lib, made.credential, root.publicKey, { perTxTokens: [{ mint: USDC, amount: 5_000_000 }] })
        .credential,
      root.publicKey,
      {
        perTxTokens: [{ mint: USDC, amount: 2_000_000 }],
      },
    ).credential,
  );
  const view = credentialLimits(
    presentedCredential(tighter, SIGN, () => NOW),
    [],
  );
  expect(view.per_tx_tokens).toEqual({ [USDC]: 2_000_000 });
  c.dispose();
  tighter.dispose();
});

test('a spend equal to the limit passes; one base unit over is refused naming the block and the check', () => {
  const c = narrowed([{ mint: USDC, amount: 5_000_000 }]);
  expect(judge(c, { [USDC]: 5_000_000n })).toBeNull();
  const over = judge(c, { [USDC]: 5_000_001n });
  expect(over).toMatchObject({ reason: 'credential_limit' });
  expect(over?.message).toMatch(/block 1 .*token_out/);
  c.dispose();
});

test('another mint, a transaction that moves no token, and a figure beyond what a fact holds', () => {
  const c = narrowed([{ mint: USDC, amount: 5_000_000 }]);
  expect(judge(c, { [OTHER]: 10n ** 12n })).toBeNull();
  expect(judge(c, {})).toBeNull();
  // Above 2^53 the fact states 2^53 - 1: still over any limit a check can state.
  expect(judge(c, { [USDC]: 2n ** 64n - 1n })).toMatchObject({ reason: 'credential_limit' });
  c.dispose();
});

test.each([
  [{ mint: 'not-a-mint', amount: 1 }, /per-tx token: "not-a-mint" is not a mint address/],
  [{ mint: USDC, amount: -1 }, /per-tx token: -1 is not a whole number of base units/],
  [{ mint: USDC, amount: 1.5 }, /per-tx token: 1.5 is not a whole number of base units/],
])('narrowing refuses %j with the reason', (limit, message) => {
  expect(() => narrowCredential(lib, made.credential, root.publicKey, { perTxTokens: [limit] })).toThrow(message);
});
