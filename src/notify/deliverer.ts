/**
 * The deliverer: one per service process. It claims due notifications from the outbox (a claim is a lease, so
 * replicas sharing PostgreSQL never post one row twice at once, and a replica that died mid-attempt only delays its
 * rows until the lease runs out), posts each with the Standard Webhooks headers, and records the result: delivered,
 * a retry after an exponential backoff with full jitter, or failed once `max_attempts` or `max_age_hours` is reached.
 * Each attempt is cut off after `timeout_ms`, so a receiver that hangs holds one slot for that long and nothing else.
 * Nothing here is on a sign's path: a sign writes its event to the outbox and goes on; this runs on its own timer.
 * A restart loses nothing: the rows are in the ledger, and the next start claims what is due.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { fullJitterDelay } from '../rpc/backoff';
import type { NotifyDelivery, NotifyHook } from '../config/types';
import type { Ledger, NotificationRecord, NotificationSettlement } from '../ledger/types';
import { errorMessage } from '../util/errors';
import { VERSION } from '../util/version';
import type { NotificationEvent } from './events';
import { renderBody } from './format';
import type { HookSigners } from './secrets';

export interface DeliveryLog {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** What metrics count: each attempt's result, by hook id. */
export interface DeliveryObserver {
  delivered(hook: string): void;
  retrying(hook: string): void;
  failed(hook: string): void;
}

export interface Deliverer {
  /** Looks at the outbox now (this process just wrote to it) instead of at the next poll. */
  kick(): void;
  /** Stops claiming, cuts off the attempts running (their rows stay pending, due at once) and waits for them. */
  close(): Promise<void>;
}

/** Attempts running at once: a few hung receivers cannot stop the others' notifications. */
const CONCURRENCY = 8;
/** Delivered rows are kept this long for `notify list` and the console, then pruned. */
const KEEP_DELIVERED_MS = 7 * 24 * 3600_000;
const PRUNE_EVERY_MS = 3600_000;
/** How long a row for a hook this process does not have is left to the others before it looks again. */
const HAND_BACK_MS = 60_000;

type Attempt = { ok: true } | { ok: false; error: string; final: boolean };

export function startDeliverer(deps: {
  ledger: Ledger;
  delivery: NotifyDelivery;
  /** The hooks and their signers now: a reload may replace them, and each attempt uses the ones it finds. */
  hooks: () => { hooks: readonly NotifyHook[]; signers: HookSigners };
  log: DeliveryLog;
  observer?: DeliveryObserver;
}): Deliverer {
  const { ledger, log } = deps;
  const settings = deps.delivery;
  const hookOf = (id: string): NotifyHook | undefined => deps.hooks().hooks.find((h) => h.id === id);
  const owner = `${hostname()}/${process.pid}/${randomBytes(4).toString('hex')}`;
  // The claim outlasts the attempt (cut off at timeout_ms) and the write of its result.
  const leaseMs = settings.timeout_ms * 2 + 10_000;
  const running = new Map<string, { abort: AbortController; done: Promise<void> }>();
  let stopped = false;
  let pumping = false;
  let again = false;
  let claimFailing = false;
  let claiming: Promise<unknown> = Promise.resolve();

  const settle = async (row: NotificationRecord, state: NotificationSettlement): Promise<void> => {
    try {
      await ledger.settleNotification(row.id, owner, state);
    } catch (e) {
      // Its claim runs out and it is attempted again: a receiver may see it twice (same webhook-id).
      log.error(
        { notification: row.id, hook: row.hook, err: errorMessage(e) },
        'a delivery result could not be recorded',
      );
    }
  };

  const attemptOnce = async (row: NotificationRecord, abort: AbortController): Promise<Attempt> => {
    const hook = hookOf(row.hook);
    if (!hook) return { ok: false, error: 'no hook with this id is configured here', final: false };
    let event: NotificationEvent;
    try {
      event = JSON.parse(row.body) as NotificationEvent;
    } catch {
      return { ok: false, error: 'the stored event does not parse', final: true };
    }
    const body = renderBody(hook.format, event);
    const now = new Date();
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': `sa-forge-signer/${VERSION}`,
      'webhook-id': row.id,
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    };
    const signer = deps.hooks().signers.get(hook.id);
    if (signer) headers['webhook-signature'] = signer.sign(row.id, now, body);
    const timeout = AbortSignal.timeout(settings.timeout_ms);
    try {
      const res = await fetch(hook.url, {
        method: 'POST',
        headers,
        body,
        // A redirect would send the signed event somewhere the operator did not configure.
        redirect: 'manual',
        signal: AbortSignal.any([abort.signal, timeout]),
      });
      await res.body?.cancel().catch(() => undefined);
      if (res.status >= 200 && res.status < 300) return { ok: true };
      // 410 Gone: the receiver says it will never take it (Standard Webhooks' "disable this endpoint").
      return { ok: false, error: `HTTP ${res.status}`, final: res.status === 410 };
    } catch (e) {
      if (timeout.aborted) return { ok: false, error: `no answer within ${settings.timeout_ms} ms`, final: false };
      // The error is stored and shown (notify list, logs): the URL, which may be a secret, never is.
      return { ok: false, error: errorMessage(e).split(hook.url).join(hook.id), final: false };
    }
  };

  const attempt = async (row: NotificationRecord, abort: AbortController): Promise<void> => {
    if (!hookOf(row.hook)) return handBack(row);
    const result = await attemptOnce(row, abort);
    const now = Date.now();
    if (!result.ok && abort.signal.aborted) {
      // Stopped mid-attempt: not counted, due again at once for whoever runs next.
      await settle(row, {
        status: 'pending',
        attempts: row.attempts,
        next_at: now,
        last_error: 'interrupted: the service stopped',
        settled_at: null,
      });
      return;
    }
    const attempts = row.attempts + 1;
    if (result.ok) {
      await settle(row, { status: 'delivered', attempts, next_at: now, last_error: null, settled_at: now });
      deps.observer?.delivered(row.hook);
      return;
    }
    const tooOld = now - row.created_at >= settings.max_age_hours * 3600_000;
    if (result.final || attempts >= settings.max_attempts || tooOld) {
      await settle(row, { status: 'failed', attempts, next_at: now, last_error: result.error, settled_at: now });
      deps.observer?.failed(row.hook);
      log.warn(
        { notification: row.id, hook: row.hook, event: row.event, attempts, err: result.error },
        'a notification could not be delivered and is marked failed (sa-forge-signer notify list)',
      );
      return;
    }
    const wait = Math.max(
      1,
      fullJitterDelay(attempts - 1, { baseMs: settings.backoff_base_ms, maxMs: settings.backoff_max_ms }),
    );
    await settle(row, { status: 'pending', attempts, next_at: now + wait, last_error: result.error, settled_at: null });
    deps.observer?.retrying(row.hook);
  };

  /**
   * A row for a hook this process does not have: another replica's config has it (a rolling change of `notify`), so
   * it is left to them, its attempts untouched, until it is older than max_age_hours; then no one is sending it.
   */
  const handBack = async (row: NotificationRecord): Promise<void> => {
    const now = Date.now();
    if (now - row.created_at >= settings.max_age_hours * 3600_000) {
      const error = 'no running service has this hook configured';
      await settle(row, { status: 'failed', attempts: row.attempts, next_at: now, last_error: error, settled_at: now });
      deps.observer?.failed(row.hook);
      return;
    }
    const later = now + Math.max(settings.poll_ms, HAND_BACK_MS);
    await settle(row, {
      status: 'pending',
      attempts: row.attempts,
      next_at: later,
      last_error: row.last_error,
      settled_at: null,
    });
  };

  const start = (row: NotificationRecord): void => {
    const abort = new AbortController();
    const done = attempt(row, abort)
      .catch((e: unknown) => log.error({ notification: row.id, err: errorMessage(e) }, 'a delivery attempt failed'))
      .finally(() => {
        running.delete(row.id);
        pump();
      });
    running.set(row.id, { abort, done });
  };

  /** Claims what is due, as many as there are free slots; runs again when asked while it was claiming. */
  const pump = (): void => {
    if (stopped) return;
    if (pumping) {
      again = true;
      return;
    }
    const free = CONCURRENCY - running.size;
    if (free <= 0) return;
    pumping = true;
    again = false;
    claiming = ledger
      .claimNotifications(owner, Date.now(), leaseMs, free)
      .then(
        async (rows) => {
          if (claimFailing) log.info({}, 'the outbox can be read again; delivering notifications');
          claimFailing = false;
          if (rows.length === free) again = true; // maybe more are due
          if (!stopped) {
            for (const row of rows) start(row);
            return;
          }
          // Claimed as the service stopped: handed back as they were, so the next deliverer need not wait out the claim.
          await Promise.all(
            rows.map((row) =>
              settle(row, {
                status: 'pending',
                attempts: row.attempts,
                next_at: row.next_at,
                last_error: row.last_error,
                settled_at: null,
              }),
            ),
          );
        },
        (e: unknown) => {
          if (!claimFailing) log.error({ err: errorMessage(e) }, 'the outbox cannot be read; notifications wait');
          claimFailing = true;
        },
      )
      .finally(() => {
        pumping = false;
        if (again && !stopped) setImmediate(pump);
      });
  };

  let pruning: Promise<unknown> = Promise.resolve();
  const prune = (): void => {
    pruning = ledger
      .pruneNotifications(Date.now() - KEEP_DELIVERED_MS)
      .catch((e: unknown) => log.error({ err: errorMessage(e) }, 'delivered notifications could not be pruned'));
  };

  const poll = setInterval(pump, settings.poll_ms);
  const pruner = setInterval(prune, PRUNE_EVERY_MS);
  poll.unref();
  pruner.unref();
  pump();
  prune();

  return {
    kick: pump,
    async close() {
      if (stopped) return;
      stopped = true;
      clearInterval(poll);
      clearInterval(pruner);
      // A claim in flight still starts nothing (stopped), and its rows' claims run out for the next deliverer.
      await Promise.allSettled([claiming, pruning]);
      for (const r of running.values()) r.abort.abort();
      await Promise.allSettled([...running.values()].map((r) => r.done));
    },
  };
}
