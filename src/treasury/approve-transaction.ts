/**
 * A treasury's approval transaction (docs/treasury.md): the unsigned ApproveChecked the treasury owner signs
 * elsewhere, one instruction per planned account, and the check a signed one passes before `treasury submit` sends
 * it: it approves exactly what was planned, and does nothing else.
 */
import {
  address,
  appendTransactionMessageInstructions,
  compileTransaction,
  createTransactionMessage,
  decompileTransactionMessage,
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  type Blockhash,
} from '@solana/kit';
import {
  TOKEN_PROGRAM_ADDRESS,
  TokenInstruction,
  getApproveCheckedInstruction,
  identifyTokenInstruction,
  parseApproveCheckedInstruction,
} from '@solana-program/token';
import type { AllowancePlan } from './plan';

/**
 * The unsigned transaction (base64 wire format) approving every plan, paid by the owner, who signs it in their
 * own wallet. All plans must share one owner (a key's treasury has one).
 */
export function approveTransaction(
  plans: readonly AllowancePlan[],
  lifetime: { blockhash: Blockhash; lastValidBlockHeight: bigint },
): string {
  const owner = plans[0]?.owner;
  if (owner === undefined) throw new Error('approveTransaction: no plans');
  const instructions = plans.map((p) =>
    getApproveCheckedInstruction({
      source: address(p.account),
      mint: address(p.mint),
      delegate: address(p.delegate),
      owner: address(p.owner),
      amount: p.amount,
      decimals: p.decimals,
    }),
  );
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayer(address(owner), m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  return getBase64EncodedWireTransaction(compileTransaction(message));
}

export type SubmitCheck = { ok: true } | { ok: false; code: 'treasury_submit_mismatch'; message: string };

const mismatch = (message: string): SubmitCheck => ({ ok: false, code: 'treasury_submit_mismatch', message });

/**
 * Whether a signed transaction approves exactly the plans (each account once: delegate, amount, decimals, mint,
 * owner) and carries no other instruction. Anything else the owner signed is not what the operator reviewed.
 */
export function checkApproveTransaction(wireBase64: string, plans: readonly AllowancePlan[]): SubmitCheck {
  let instructions;
  try {
    const tx = getTransactionDecoder().decode(getBase64Encoder().encode(wireBase64));
    const compiled = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
    if ('addressTableLookups' in compiled && (compiled.addressTableLookups?.length ?? 0) > 0) {
      return mismatch('the transaction uses address lookup tables; the plan has none');
    }
    instructions = decompileTransactionMessage(compiled).instructions;
  } catch (e) {
    return mismatch(`not a Solana transaction in base64: ${(e as Error).message}`);
  }
  if (instructions.length !== plans.length) {
    return mismatch(`the transaction has ${instructions.length} instructions; the plan has ${plans.length} approvals`);
  }
  const seen = new Set<string>();
  for (const [i, ix] of instructions.entries()) {
    if (ix.programAddress !== TOKEN_PROGRAM_ADDRESS || ix.data === undefined || ix.accounts === undefined) {
      return mismatch(`instruction ${i} is not an SPL Token instruction`);
    }
    const withData = { ...ix, data: ix.data, accounts: ix.accounts };
    if (identifyTokenInstruction(withData) !== TokenInstruction.ApproveChecked) {
      return mismatch(`instruction ${i} is not ApproveChecked`);
    }
    const parsed = parseApproveCheckedInstruction(withData);
    const account = parsed.accounts.source.address;
    const plan = plans.find((p) => p.account === account);
    if (plan === undefined || seen.has(account)) {
      return mismatch(
        `instruction ${i} approves token account ${account}, which the plan does not list (or lists once)`,
      );
    }
    seen.add(account);
    const got = {
      mint: parsed.accounts.mint.address,
      owner: parsed.accounts.owner.address,
      delegate: parsed.accounts.delegate.address,
      amount: parsed.data.amount,
      decimals: parsed.data.decimals,
    };
    // A dollar-sized amount is recomputed at today's price, which may have moved since the plan: less than it is
    // never more spending power than the policy implies.
    if (plan.basis === 'usd.per_day' && got.amount > 0n && got.amount <= plan.amount) got.amount = plan.amount;
    for (const field of ['mint', 'owner', 'delegate', 'amount', 'decimals'] as const) {
      if (got[field] !== plan[field]) {
        return mismatch(
          `instruction ${i} approves ${field} ${String(got[field])}; the plan says ${String(plan[field])}`,
        );
      }
    }
  }
  return { ok: true };
}
