/**
 * Sending and confirming: the transaction is sent once, then its status and the finalized block height are
 * polled together until it lands, its blockhash has expired with no landed status, the RPC failed too many times
 * in a row, or the deadline passes. It is re-sent every few timed polls (the same signed bytes, so at most one
 * lands). When the cluster's WebSocket notices are on, a notice that the signature reached the commitment brings
 * the next poll forward; the poll's status read still decides, so a notice the read contradicts changes nothing.
 * With the socket down no notice comes and the timed polls alone find the outcome.
 * An outcome that is not proven is `unknown`, with what to check before retrying. Resolves to the landed
 * transaction's metadata when the node returned it (what the tripwire compares with the reservation): read with
 * the status after a notice, else once the status read found it landed.
 */
import { meetsCommitment } from '../../rpc/commitment';
import { failureStreak } from '../../rpc/failure-streak';
import type { SignatureNotices } from '../../rpc/signature-notices';
import type { RpcClient, TransactionMeta } from '../../rpc/types';
import type { Timings } from '../../config/types';
import { errorMessage } from '../../util/errors';
import { sleep } from '../../util/time';
import { programError } from './program-error';
import type { Report } from '../report';
import type { SignProgress } from '../types';
import { seconds } from './step';
import type { SignedTransaction } from '../sources/transaction';

export interface SendDeps {
  chain: RpcClient;
  timings: Timings;
  /** Pushed notices that a signature landed; null: polling only. */
  notices: SignatureNotices | null;
}

type Landing = { landed: true; slot: number; err: unknown } | { landed: false; detail: string };

const RECONCILE = 'look up the signature and check the on-chain state before retrying';

export async function sendAndConfirm(
  deps: SendDeps,
  built: SignedTransaction,
  /** The block height after which it can no longer land (`Figures.validUntil`). */
  lastValid: number,
  report: Report,
  progress: (p: SignProgress) => void,
): Promise<TransactionMeta | null> {
  const { chain, timings: t } = deps;
  const { signature } = built;
  const started = Date.now();
  // No retry inside one call may outlast the confirmation deadline.
  const limits = { deadlineAt: started + t.confirm_deadline_ms };
  // Polls that failed in a row, not in total: an endpoint that fails now and then never ends the wait.
  const streak = failureStreak(t.max_rpc_failures);
  let lastError: string | null = null;
  /** Counts a failed poll; true once too many have failed in a row to go on. */
  const failed = (e: unknown): boolean => {
    lastError = errorMessage(e);
    report.detail = lastError;
    return streak.fail();
  };
  const gaveUp = (): Landing => ({ landed: false, detail: `${lastError ?? 'RPC failures'}; ${RECONCILE}` });

  // Subscribed together with the send: the node acknowledges it well before a block can confirm the transaction.
  const following = new AbortController();
  let notice = deps.notices?.landed(signature, following.signal) ?? null;
  try {
    await chain.sendTransaction(built.wireBase64, limits);
  } catch (e) {
    report.detail = `send: ${errorMessage(e)}`;
  }

  report.balance_change = null;
  let outcome: Landing | null = null;
  /** The landed transaction's metadata when it came with the status read that found it landed. */
  let landedMeta: TransactionMeta | null = null;
  /** Status reads that also asked for the metadata (after a notice): each is one of `metadata_attempts`. */
  let metaAsked = 0;
  let timedPolls = 0;
  try {
    for (let polls = 1; outcome === null; polls++) {
      const woken = await nextPoll(t.poll_interval_ms, notice);
      // A notice wakes one poll: after it, only the status reads decide, as without notices.
      if (woken === 'notice') {
        notice = null;
        metaAsked++;
      } else timedPolls++;
      // Status and finalized height in one round trip (the RPC client batches calls made together). After a notice
      // the landed transaction's metadata is asked for in the same request: the status read still decides, and
      // the answer then carries what would otherwise take one more round trip after it.
      const [statuses, height, meta] = await Promise.allSettled([
        chain.getSignatureStatuses([signature], { searchTransactionHistory: false }, limits),
        chain.getBlockHeight('finalized', limits),
        woken === 'notice' ? chain.getTransaction(signature, limits) : Promise.resolve(null),
      ]);
      const s = statuses.status === 'fulfilled' ? statuses.value[0] : null;
      const status = s?.confirmationStatus ?? null;
      // One failed poll counts once, whichever of its two calls failed.
      const pollError: unknown =
        statuses.status === 'rejected' ? statuses.reason : height.status === 'rejected' ? height.reason : null;
      if (s?.confirmationStatus && meetsCommitment(s.confirmationStatus, chain.commitment)) {
        outcome = { landed: true, slot: s.slot, err: s.err };
        if (meta.status === 'fulfilled') landedMeta = meta.value;
      } else if (pollError !== null) {
        if (failed(pollError)) outcome = gaveUp();
      } else if (height.status === 'fulfilled') {
        streak.ok();
        if (height.value > lastValid) {
          outcome = await afterExpiry(chain, signature, height.value, lastValid, limits).catch((e: unknown) =>
            failed(e) ? gaveUp() : null,
          );
        }
      }
      const elapsed = Date.now() - started;
      if (outcome === null && elapsed >= t.confirm_deadline_ms) {
        outcome = {
          landed: false,
          detail: `no proven outcome within ${seconds(t.confirm_deadline_ms)}s; ${RECONCILE}`,
        };
      }
      if (outcome === null && woken === 'timer' && timedPolls % t.rebroadcast_every === 0) {
        await chain.sendTransaction(built.wireBase64, limits).catch(() => undefined);
      }
      progress({ stage: 'confirming', signature, polls, elapsed_ms: elapsed, status });
    }
  } finally {
    following.abort();
  }

  if (!outcome.landed) {
    report.outcome = 'unknown';
    report.detail = outcome.detail;
    return null;
  }
  report.slot = outcome.slot;
  report.outcome = outcome.err === null || outcome.err === undefined ? 'confirmed' : 'failed';
  report.error = report.outcome === 'failed' ? outcome.err : null;
  if (report.outcome === 'confirmed') report.detail = null;
  if (landedMeta !== null) return withMetadata(report, landedMeta);
  return fetchMetadata(deps, signature, report, started, metaAsked);
}

/**
 * Waits one poll interval, or less when a notice (true) arrives first: 'notice' then, else 'timer'. A notice that
 * resolves false (the wait ended without one) leaves the interval to run out.
 */
async function nextPoll(intervalMs: number, notice: Promise<boolean> | null): Promise<'notice' | 'timer'> {
  if (notice === null) {
    await sleep(intervalMs);
    return 'timer';
  }
  let timer: NodeJS.Timeout | undefined;
  const interval = new Promise<'timer'>((resolve) => {
    timer = setTimeout(() => resolve('timer'), intervalMs);
  });
  const noticed = notice.then((landed) => (landed ? ('notice' as const) : interval));
  try {
    return await Promise.race([interval, noticed]);
  } finally {
    clearTimeout(timer);
  }
}

/** Past the blockhash's last valid height: a landed status in history, or `unknown` (expiry proves nothing). */
async function afterExpiry(
  chain: RpcClient,
  signature: string,
  height: number,
  lastValid: number,
  limits: { deadlineAt: number },
): Promise<Landing> {
  const [h] = await chain.getSignatureStatuses([signature], { searchTransactionHistory: true }, limits);
  if (h?.confirmationStatus && meetsCommitment(h.confirmationStatus, chain.commitment)) {
    return { landed: true, slot: h.slot, err: h.err };
  }
  return {
    landed: false,
    detail: `blockhash expired (finalized height ${height} is past ${lastValid}) and the RPC reports no landed status; that does not prove it never landed: ${RECONCILE}`,
  };
}

/** The landed transaction's actual fee, balance change and logs, within what is left of the deadline. */
async function fetchMetadata(
  deps: SendDeps,
  signature: string,
  report: Report,
  sendStarted: number,
  /** Attempts already made with the status reads. */
  made: number,
): Promise<TransactionMeta | null> {
  const t = deps.timings;
  for (let attempt = made; attempt < t.metadata_attempts; attempt++) {
    if (attempt > 0) {
      if (Date.now() - sendStarted + t.poll_interval_ms > t.confirm_deadline_ms) return null;
      await sleep(t.poll_interval_ms);
    }
    const meta = await deps.chain
      .getTransaction(signature, { deadlineAt: sendStarted + t.confirm_deadline_ms })
      .catch(() => null);
    if (meta) return withMetadata(report, meta);
  }
  return null;
}

/** The report given the landed transaction's actual fee, balance change and logs. */
function withMetadata(report: Report, meta: TransactionMeta): TransactionMeta {
  if (meta.preBalance0 !== null && meta.postBalance0 !== null)
    report.balance_change = meta.postBalance0 - meta.preBalance0;
  if (meta.fee !== null) report.fee = meta.fee;
  report.logs = meta.logs;
  if (report.outcome === 'failed') {
    report.program_error = programError(meta.logs);
    if (report.program_error) report.detail = report.program_error;
  }
  return meta;
}
