/**
 * The checks a policy passes before it is used, at start and at every reload alike: each key opens from its store and
 * holds the configured pubkey, and each mint a key may spend is an account on the chain owned by the token program
 * its policy names. A mint that is not there would refuse every payment in it with a message about the chain.
 */
import type { RpcClient } from '../rpc/types';
import { errorMessage } from '../util/errors';
import type { KeyProblem } from '../keys/key-set';

/** A reason a key of the policy cannot be used: its store's (opening the key) or the chain's (a mint). */
export type PolicyProblem = Pick<KeyProblem, 'key' | 'message'> & Partial<Pick<KeyProblem, 'store'>>;
import type { Policy } from './policy';
import { programId } from '../solana/token-state';

export async function mintProblems(policy: Policy, chain: RpcClient): Promise<PolicyProblem[]> {
  const wanted = policy.keys.flatMap((k) =>
    (k.tokens ?? []).map((t, i) => ({ key: k.name, where: `keys.${k.name}.tokens[${String(i)}].mint`, token: t })),
  );
  if (wanted.length === 0) return [];
  let accounts: Awaited<ReturnType<RpcClient['getMultipleAccounts']>>;
  try {
    accounts = await chain.getMultipleAccounts(wanted.map((w) => w.token.mint));
  } catch (e) {
    return [{ key: wanted[0]?.key ?? '', message: `the mints could not be read from the chain: ${errorMessage(e)}` }];
  }
  const problems: PolicyProblem[] = [];
  wanted.forEach((w, i) => {
    const account = accounts[i] ?? null;
    const owner = programId(w.token.program);
    if (account === null)
      problems.push({
        key: w.key,
        message: `${w.where}: no account ${w.token.mint} on the chain (a typo, or another cluster's mint?)`,
      });
    else if (account.owner !== owner)
      problems.push({
        key: w.key,
        message: `${w.where}: ${w.token.mint} is owned by ${account.owner}, not the ${w.token.program} program (${owner}): not a mint of that program`,
      });
  });
  return problems;
}

/** Every reason the policy cannot be used as it is; empty when it can. */
export async function policyProblems(policy: Policy, chain: RpcClient): Promise<PolicyProblem[]> {
  const files = await policy.keySet.verify();
  return [...files, ...(await mintProblems(policy, chain))];
}
