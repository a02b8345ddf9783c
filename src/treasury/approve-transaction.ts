/**
 * A treasury's approval transaction (docs/treasury.md): the unsigned ApproveChecked the treasury owner signs
 * elsewhere, one instruction per planned account, and the check a signed one passes before `treasury submit` sends
 * it: it approves exactly what was planned, and does nothing else.
 *
 * ApproveChecked has the same tag, data and accounts in SPL Token and Token-2022; only the program an instruction
 * is addressed to differs, and it must be the one that owns the account. The SPL Token program client encodes and
 * parses it for both, given that program's address.
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
  type ReadonlyUint8Array,
} from '@solana/kit';
import {
  TokenInstruction,
  getApproveCheckedInstruction,
  identifyTokenInstruction,
  parseApproveCheckedInstruction,
} from '@solana-program/token';
import { TOKEN_PROGRAMS } from '../solana/programs';
import { programId, programName } from '../solana/token-state';
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
    getApproveCheckedInstruction(
      {
        source: address(p.account),
        mint: address(p.mint),
        delegate: address(p.delegate),
        owner: address(p.owner),
        amount: p.amount,
        decimals: p.decimals,
      },
      { programAddress: address(programId(p.program)) },
    ),
  );
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayer(address(owner), m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  return getBase64EncodedWireTransaction(compileTransaction(message));
}

/** The instruction's kind, or null for one the SPL Token client does not know (a Token-2022 extension's). */
function identify(ix: { data: Uint8Array | ReadonlyUint8Array }): TokenInstruction | null {
  try {
    return identifyTokenInstruction(ix);
  } catch {
    return null;
  }
}

export type SubmitCheck = { ok: true } | { ok: false; code: 'treasury_submit_mismatch'; message: string };

const mismatch = (message: string): SubmitCheck => ({ ok: false, code: 'treasury_submit_mismatch', message });

/**
 * Whether a signed transaction approves exactly the plans (each account once: delegate, amount, decimals, mint,
 * owner, through the program that owns the account) and carries no other instruction. Anything else the owner signed is not what the operator reviewed.
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
    if (!TOKEN_PROGRAMS.has(ix.programAddress) || ix.data === undefined || ix.accounts === undefined) {
      return mismatch(`instruction ${i} is not a token program instruction`);
    }
    const withData = { ...ix, data: ix.data, accounts: ix.accounts };
    if (identify(withData) !== TokenInstruction.ApproveChecked) {
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
    if (ix.programAddress !== programId(plan.program)) {
      return mismatch(
        `instruction ${i} is addressed to ${programName(ix.programAddress) ?? ix.programAddress}; token account ${account} is a ${plan.program} account`,
      );
    }
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
