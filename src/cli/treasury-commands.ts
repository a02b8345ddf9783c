/**
 * `sa-forge-signer treasury plan NAME` and `treasury submit FILE` (docs/treasury.md): the unsigned ApproveChecked
 * the treasury owner signs in their own wallet, and, once signed, the check that it approves exactly that plan
 * before it is sent.
 */
import fs from 'node:fs';
import type { Blockhash } from '@solana/kit';
import type { KeyConfig, SignerConfig } from '../config/types';
import { approveTransaction, checkApproveTransaction } from '../treasury/approve-transaction';
import type { AllowancePlan } from '../treasury/plan';
import { planTreasury } from '../treasury/status';
import { SignerError } from '../util/errors';
import { flag, type ParsedArgs } from './args';
import { usageOf } from './commands';
import { err, keyOf, out, outJson, rpcFor, withChainHint } from './context';

async function plansFor(cfg: SignerConfig, key: KeyConfig): Promise<AllowancePlan[]> {
  const planned = await planTreasury(rpcFor(cfg), key, cfg.prices);
  if (!planned.ok) throw new SignerError('request_invalid', `${planned.code}: ${planned.message}`);
  return planned.plans;
}

export async function treasuryPlan(cfg: SignerConfig, args: ParsedArgs): Promise<number> {
  const name = args.positional[2];
  if (name === undefined) throw new SignerError('request_invalid', `usage: ${usageOf('treasury plan')}`);
  const key = keyOf(cfg, name);
  try {
    const plans = await plansFor(cfg, key);
    const { blockhash, lastValidBlockHeight } = await rpcFor(cfg).getLatestBlockhash();
    const transaction = approveTransaction(plans, {
      blockhash: blockhash as Blockhash,
      lastValidBlockHeight: BigInt(lastValidBlockHeight),
    });
    const shown = plans.map((p) => ({ ...p, amount: p.amount.toString() }));
    if (flag(args, 'json')) {
      outJson({ key: key.name, plans: shown, transaction });
      return 0;
    }
    for (const p of plans) {
      err(
        `${p.account}: ${p.owner} lets ${p.delegate} spend ${p.amount} of ${p.mint} (${p.program}, decimals ${p.decimals})`,
      );
      err(`  sized by ${p.basis}: ${p.why}`);
    }
    err(`sign this with ${plans[0]?.owner ?? 'the owner'}'s wallet, then: sa-forge-signer treasury submit FILE`);
    out(transaction);
    return 0;
  } catch (e) {
    throw withChainHint(cfg, e);
  }
}

export async function treasurySubmit(cfg: SignerConfig, args: ParsedArgs): Promise<number> {
  const file = args.positional[2];
  if (file === undefined) throw new SignerError('request_invalid', `usage: ${usageOf('treasury submit')}`);
  const wire = (file === '-' ? fs.readFileSync(0, 'utf8') : fs.readFileSync(file, 'utf8')).trim();
  try {
    // The transaction must be some treasury key's whole plan, as the config and the chain give it now.
    const reasons: string[] = [];
    for (const key of cfg.keys.filter((k) => k.treasury !== undefined)) {
      // A key whose plan cannot be made (a refused mint, a price that fails) is not the one this approves; it must
      // not stop another key's approval from being sent.
      const planned = await planTreasury(rpcFor(cfg), key, cfg.prices);
      if (!planned.ok) {
        reasons.push(`keys.${key.name}: no plan (${planned.code}: ${planned.message})`);
        continue;
      }
      const verdict = checkApproveTransaction(wire, planned.plans);
      if (!verdict.ok) {
        reasons.push(`keys.${key.name}: ${verdict.message}`);
        continue;
      }
      const signature = await rpcFor(cfg).sendTransaction(wire);
      if (flag(args, 'json')) outJson({ key: key.name, signature });
      else out(signature);
      return 0;
    }
    throw new SignerError(
      'request_invalid',
      `treasury_submit_mismatch: the transaction is not a planned allowance; ${reasons.join('; ') || 'no key has a treasury'}`,
    );
  } catch (e) {
    throw withChainHint(cfg, e);
  }
}
