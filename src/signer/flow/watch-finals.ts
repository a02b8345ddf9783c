/**
 * The final audit entries the watcher writes for a transaction it followed (watch-signed.ts): landed as another
 * account's transaction, expired (`signed_expired`, which releases the reservation), or `unknown` (an orphan past its
 * blockhash, or a foreign-fee-payer transaction the key's history could not settle in time), which keeps it.
 */
import type { RpcClient, SignatureStatus, TransactionMeta } from '../../rpc/types';
import type { WatchedSign } from './intent-watch';
import type { Found } from './key-history';

/** The final outcome that releases a sign-only reservation: expired, never landed. */
export const SIGNED_EXPIRED = 'signed_expired';

export interface Final {
  outcome: string;
  slot: number | null;
  balance_change: number | null;
  detail: string;
  /** The landed transaction's metadata, for the tripwire; absent when it did not land or was not returned. */
  meta?: TransactionMeta | null;
}

export function expiredFinal(height: number, w: WatchedSign): Final {
  return {
    outcome: SIGNED_EXPIRED,
    slot: null,
    balance_change: null,
    detail: `sign_only: the blockhash expired (finalized height ${height} is past ${w.lastValidBlockHeight}) and the signature never landed; its reservation is released`,
  };
}

export const ORPHAN_NOTE = 'the signer stopped before writing the final entry; a restarted signer looked it up';

/** A sent orphan past its blockhash with no landed status: `unknown`, as the sign would have ended (send-confirm.ts). */
export function orphanUnknownFinal(height: number, w: WatchedSign): Final {
  return {
    outcome: 'unknown',
    slot: null,
    balance_change: null,
    detail: `${ORPHAN_NOTE}: the blockhash expired (finalized height ${height} is past ${w.lastValidBlockHeight}) and the RPC reports no landed status; that does not prove it never landed, so its reservation stays: look up the signature and check the on-chain state before retrying`,
  };
}

/**
 * The final entry of a foreign-fee-payer transaction the watcher could not settle: past its blockhash, the key's
 * history not examined completely in time. `unknown` keeps its reservation (ledger/limits.ts).
 */
export function unresolvedFinal(w: WatchedSign, height: number, deadlineMs: number, why: string): Final {
  return {
    outcome: 'unknown',
    slot: null,
    balance_change: null,
    detail: `sign_only: the blockhash expired (finalized height ${height} is past ${w.lastValidBlockHeight}) but the key's transactions since slot ${w.fromSlot} could not all be examined within ${Math.round(deadlineMs / 1000)} s (${why}); whether it landed is not proven, so its reservation stays: look up the key's transactions before signing again`,
  };
}

/** The final entry of a foreign-fee-payer transaction found landed: the key's own balance change, the id named. */
export function foreignFinal(w: WatchedSign, { listed, meta }: Found): Final {
  const at = meta.accountKeys.indexOf(w.rec.key.pubkey);
  const pre = meta.preBalances[at];
  const post = meta.postBalances[at];
  const change = at >= 0 && pre !== undefined && post !== undefined ? post - pre : null;
  const err = meta.err ?? listed.err;
  const failed = err !== null && err !== undefined;
  const payer = meta.accountKeys[0] ?? w.feePayer ?? 'unknown';
  const fee = meta.fee === null ? '' : ` (${meta.fee} lamports)`;
  const landedAs = `landed as ${listed.signature}, fee paid by ${payer}${fee}`;
  return {
    outcome: failed ? 'failed' : 'confirmed',
    slot: meta.slot,
    balance_change: change,
    detail: failed ? `sign_only: ${landedAs}; it failed: ${JSON.stringify(err)}` : `sign_only: ${landedAs}`,
    meta,
  };
}

/** A signature found landed by its status: `confirmed` or `failed`, with the landed balance change when the chain gives it. */
export async function landedFinal(
  chain: Pick<RpcClient, 'getTransaction'>,
  w: WatchedSign,
  s: SignatureStatus,
): Promise<Final> {
  const failed = s.err !== null && s.err !== undefined;
  const meta = await chain.getTransaction(w.signature).catch(() => null);
  const change =
    meta && meta.preBalance0 !== null && meta.postBalance0 !== null ? meta.postBalance0 - meta.preBalance0 : null;
  return {
    outcome: failed ? 'failed' : 'confirmed',
    slot: s.slot,
    // Unknown stays null: the caps then keep counting the intent's reservation.
    balance_change: change,
    detail: w.orphan
      ? `${ORPHAN_NOTE}; it landed${failed ? ` and failed: ${JSON.stringify(s.err)}` : ''}`
      : failed
        ? `the caller sent it and it failed: ${JSON.stringify(s.err)}`
        : 'sign_only: landed',
    meta,
  };
}
