/**
 * The structural policy checks: pure functions of the prepared message (its resolved account list), the key and
 * the cluster, run in the order docs/policy.md lists them. The first that fails is the refusal; its message
 * names the instruction and the account at fault.
 */
import type { ClusterProfile, KeyConfig } from '../../config/types';
import type { CompiledInstruction, CompiledMessage } from '../compile';
import { requiredSigners } from '../compile';
import { writableAccounts } from '../writable-accounts';
import { refusal, type Refusal } from '../refusals';
import { tokenInstructionName, tokenInstructionVerdict } from '../spl-tokens/instructions';
import {
  ALWAYS_ALLOWED_PROGRAMS,
  ASSOCIATED_TOKEN_PROGRAM,
  DRAIN_SOL_VAULT_DISCRIMINATOR,
  SYSTEM_PROGRAM,
  SYSTEM_TRANSFER_TAG,
  TOKEN_PROGRAMS,
} from '../../solana/programs';

export interface CheckSubject {
  key: KeyConfig;
  cluster: ClusterProfile;
  msg: CompiledMessage;
  partialSigners: readonly string[]; // pubkeys only
  /** The fee payer when it is not the key (payload v2, sign_only): it signs last, so its slot may be empty. */
  foreignFeePayer?: string | null;
}

/** The names pushed together when every structural check passes. */
export const STRUCTURAL_CHECKS = ['fee_payer', 'programs', 'tokens', 'system', 'vault', 'signers'] as const;

export function structuralRefusal(s: CheckSubject): Refusal | null {
  return (
    checkFeePayer(s) ??
    checkPrograms(s) ??
    checkTokens(s) ??
    checkSystem(s) ??
    checkWritable(s) ??
    checkVault(s) ??
    checkSigners(s)
  );
}

const account = (msg: CompiledMessage, ix: CompiledInstruction, n: number): string | undefined => {
  const idx = ix.accountIndices[n];
  return idx === undefined ? undefined : msg.accountKeys[idx];
};
const programOf = (msg: CompiledMessage, ix: CompiledInstruction): string | undefined =>
  msg.accountKeys[ix.programIdIndex];

function checkFeePayer({ msg, key, foreignFeePayer }: CheckSubject): Refusal | null {
  const payer = msg.accountKeys[0];
  if (payer === undefined) return refusal('no_accounts', 'message has no accounts');
  if (payer !== key.pubkey && payer !== foreignFeePayer)
    return refusal('fee_payer_not_key', `fee payer ${payer} is not the signing key ${key.pubkey}`, {
      fee_payer: payer,
    });
  return null;
}

/**
 * The top-level programs a key may call, in order, once each: the cluster's, the key's extras, and those every key
 * may call (the token programs are judged by the token policy from the simulation; Memo and ComputeBudget move no
 * value). key_show shows the same list.
 */
export function allowedPrograms(cluster: ClusterProfile, key: KeyConfig): string[] {
  return [...new Set([...cluster.programs.map((p) => p.address), ...key.extra_programs, ...ALWAYS_ALLOWED_PROGRAMS])];
}

function checkPrograms({ msg, key, cluster }: CheckSubject): Refusal | null {
  const allowed = new Set(allowedPrograms(cluster, key));
  for (const [i, ix] of msg.instructions.entries()) {
    const program = programOf(msg, ix);
    if (program === undefined)
      return refusal('program_missing', `instruction ${i} has no program id`, { instruction: i });
    if (!allowed.has(program))
      return refusal('program_not_allowed', `instruction ${i} calls ${program}, which is not allowed`, {
        instruction: i,
        program,
      });
  }
  return null;
}

/**
 * Token instructions by their tag, before anything is simulated, so the common refusals name the instruction.
 * The token policy then judges what the simulation moved, which also covers the same operations reached through
 * another program (movements.ts).
 */
function checkTokens({ msg, key }: CheckSubject): Refusal | null {
  const allowedOps = new Set(key.allow_token_ops ?? []);
  for (const [i, ix] of msg.instructions.entries()) {
    const program = programOf(msg, ix);
    if (program === undefined) continue; // refused by the programs check already
    if (TOKEN_PROGRAMS.has(program)) {
      const tag = ix.data[0];
      const verdict = tag === undefined ? 'refused' : tokenInstructionVerdict(tag);
      if (verdict === 'allowed' || (verdict !== 'refused' && allowedOps.has(verdict))) continue;
      const name =
        tag === undefined ? 'an empty token instruction' : `token instruction ${tokenInstructionName(tag, program)}`;
      return verdict === 'refused'
        ? refusal('token_instruction_refused', `instruction ${i} is ${name}, which the signer does not sign`, {
            instruction: i,
          })
        : refusal(
            'token_op_not_allowed',
            `instruction ${i} is ${name}, which this key may not do (add "${verdict}" to its allow_token_ops to allow it)`,
            { token_op: verdict },
          );
    }
    if (program !== ASSOCIATED_TOKEN_PROGRAM) continue;
    // Empty data is the legacy Create; only Create (0) and CreateIdempotent (1) may pass.
    const tag = ix.data[0] ?? 0;
    if (ix.data.length > 1 || (tag !== 0 && tag !== 1)) {
      return refusal(
        'ata_instruction_not_allowed',
        `instruction ${i} is associated-token instruction ${tag}; only create is allowed`,
        { instruction: i },
      );
    }
    const systemSlot = account(msg, ix, 4);
    const tokenSlot = account(msg, ix, 5);
    if (
      ix.accountIndices.length < 6 ||
      systemSlot !== SYSTEM_PROGRAM ||
      tokenSlot === undefined ||
      !TOKEN_PROGRAMS.has(tokenSlot)
    ) {
      return refusal(
        'ata_create_malformed',
        `instruction ${i} creates a token account without the System and SPL Token or Token-2022 programs`,
        { instruction: i },
      );
    }
  }
  return null;
}

function checkSystem({ msg, key }: CheckSubject): Refusal | null {
  const destinations = new Set(key.transfer_to);
  for (const [i, ix] of msg.instructions.entries()) {
    if (programOf(msg, ix) !== SYSTEM_PROGRAM) continue;
    if (ix.data.length < 4)
      return refusal('system_instruction_malformed', `instruction ${i} is too short`, { instruction: i });
    const tag = Buffer.from(ix.data.buffer, ix.data.byteOffset, 4).readUInt32LE(0);
    if (tag !== SYSTEM_TRANSFER_TAG)
      return refusal(
        'system_instruction_not_allowed',
        `instruction ${i} is System instruction ${tag}, which is not allowed`,
        { instruction: i },
      );
    const destination = account(msg, ix, 1);
    if (destination === undefined)
      return refusal('system_instruction_malformed', `instruction ${i} is missing an account`, { instruction: i });
    if (!destinations.has(destination)) {
      return refusal(
        'transfer_destination_not_allowed',
        `instruction ${i} transfers to ${destination}, which is not an allowed destination`,
        { instruction: i, destination },
      );
    }
  }
  return null;
}

/**
 * With `writable_allow` set, the accounts a transaction may write are the key's own, its `transfer_to` and that
 * list: an operator who knows exactly what an agent touches can close every other door. Refused as a destination,
 * since a writable account is where value can go.
 */
function checkWritable({ msg, key }: CheckSubject): Refusal | null {
  if (key.writable_allow === undefined || key.writable_allow === null) return null;
  const allowed = new Set([key.pubkey, ...key.transfer_to, ...key.writable_allow]);
  const stray = writableAccounts(msg).find((a) => !allowed.has(a));
  if (stray === undefined) return null;
  return refusal(
    'writable_not_allowed',
    `the transaction writes ${stray}, which is neither the key, one of its transfer_to, nor in its writable_allow`,
    { account: stray },
  );
}

function checkVault({ msg, key, cluster }: CheckSubject): Refusal | null {
  // Wallet keys keep DrainSolVault; the chain enforces every other Player Profile permission.
  if (key.class !== 'session' || cluster.player_profile === null) return null;
  for (const [i, ix] of msg.instructions.entries()) {
    if (programOf(msg, ix) !== cluster.player_profile) continue;
    if (ix.data.length < 8)
      return refusal(
        'vault_instruction_malformed',
        `instruction ${i} is too short to parse as a Player Profile instruction`,
        { instruction: i },
      );
    if (DRAIN_SOL_VAULT_DISCRIMINATOR.every((b, j) => ix.data[j] === b)) {
      return refusal(
        'vault_withdrawal',
        `instruction ${i} withdraws the profile vault, which is refused for this key`,
        { instruction: i },
      );
    }
  }
  return null;
}

function checkSigners({ msg, key, partialSigners, foreignFeePayer }: CheckSubject): Refusal | null {
  const required = requiredSigners(msg);
  const requiredSet = new Set(required);
  for (const p of partialSigners) {
    if (p === key.pubkey) return refusal('partial_signer_is_key', 'a partial signer is the signing key');
    if (!requiredSet.has(p))
      return refusal('partial_signer_not_required', `partial signer ${p} is not a signer of the transaction`, {
        account: p,
      });
  }
  const partials = new Set(partialSigners);
  for (const r of required) {
    if (r !== key.pubkey && r !== foreignFeePayer && !partials.has(r)) {
      return refusal(
        'required_signer_unavailable',
        `${r} must sign, but it is neither the signing key nor a partial signer`,
        { account: r },
      );
    }
  }
  return null;
}

/**
 * Owners of token accounts the transaction would create that need an on-chain look-up: every ATA owner
 * other than the key and its transfer destinations, once each. A malformed ATA instruction is a refusal.
 */
export function ataOwnersToVerify({ msg, key }: CheckSubject): Refusal | string[] {
  const trusted = new Set([key.pubkey, ...key.transfer_to]);
  const owners: string[] = [];
  for (const [i, ix] of msg.instructions.entries()) {
    if (programOf(msg, ix) !== ASSOCIATED_TOKEN_PROGRAM) continue;
    if (ix.accountIndices.length < 6)
      return refusal('ata_accounts_missing', `instruction ${i} is missing associated-token accounts`, {
        instruction: i,
      });
    const owner = account(msg, ix, 2);
    if (owner === undefined)
      return refusal('ata_accounts_missing', `instruction ${i} is missing associated-token accounts`, {
        instruction: i,
      });
    if (!trusted.has(owner) && !owners.includes(owner)) owners.push(owner);
  }
  return owners;
}

export function ataOwnerRefusal(owner: string): Refusal {
  return refusal(
    'ata_owner_not_allowed',
    `a token account would be created for ${owner}, which is neither this key, one of its transfer destinations, nor an account of a game program`,
    { account: owner },
  );
}

/**
 * The program's own message from simulation or transaction logs: the first "Program log: …Error…" line's
 * remainder, else the last " failed: " line whole, else null.
 */
export function programError(logs: readonly string[]): string | null {
  for (const line of logs) {
    if (line.startsWith('Program log: ') && line.slice('Program log: '.length).includes('Error'))
      return line.slice('Program log: '.length);
  }
  return logs.findLast((line) => line.includes(' failed: ')) ?? null;
}
