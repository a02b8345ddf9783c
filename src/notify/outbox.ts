/**
 * Writing events to the outbox: one row per hook that asked for the event, in the ledger, when the event happens.
 * Any process that records events writes here (the service, a CLI halt); the service's deliverer sends them. A
 * failed write is logged and never fails or delays what caused the event: a notification is news about the ledger,
 * not part of it. `flush` waits for the writes still running, so a process closes its ledger only after them.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { NotifyHook } from '../config/types';
import type { Ledger, NotificationInput } from '../ledger/types';
import { errorMessage } from '../util/errors';
import type { NotificationEvent } from './events';

export interface OutboxLog {
  error(obj: object, msg?: string): void;
}

export interface Notifier {
  /** Writes the event for every hook that asked for it; resolves once durable (or the failure logged), never rejects. */
  emit(event: NotificationEvent): Promise<void>;
  /** Resolves once every write started so far has ended. */
  flush(): Promise<void>;
}

export const noNotifier: Notifier = { emit: () => Promise.resolve(), flush: () => Promise.resolve() };

/** A fresh Standard Webhooks message id: the receiver's key for ignoring a notification delivered twice. */
export const newMessageId = (): string => `msg_${randomUUID().replace(/-/g, '')}`;

/** The message id of an event that happens once (`once`), the same in every process that reports it. */
const onceMessageId = (once: string, hook: string): string =>
  `msg_${createHash('sha256').update(`${once}\n${hook}`).digest('hex').slice(0, 32)}`;

export function createOutbox(deps: {
  ledger: Ledger;
  /** The hooks, or where to read them at each event (a reload may replace them). */
  hooks: readonly NotifyHook[] | (() => readonly NotifyHook[]);
  log: OutboxLog;
  /** Told after rows are written, so this process's deliverer sends them at once instead of at its next poll. */
  onEnqueued?: () => void;
}): Notifier {
  if (Array.isArray(deps.hooks) && deps.hooks.length === 0) return noNotifier;
  const hooks = typeof deps.hooks === 'function' ? deps.hooks : () => deps.hooks as readonly NotifyHook[];
  const running = new Set<Promise<void>>();

  const write = async (event: NotificationEvent): Promise<void> => {
    const wanted = hooks().filter((h) => h.events.includes(event.type));
    if (wanted.length === 0) return;
    const now = Date.now();
    const { once, ...shown } = event;
    const body = JSON.stringify(shown);
    const key = typeof event.data.key === 'string' ? event.data.key : null;
    const rows: NotificationInput[] = wanted.map((h) => ({
      id: once === undefined ? newMessageId() : onceMessageId(once, h.id),
      hook: h.id,
      event: event.type,
      key,
      body,
      created_at: now,
      next_at: now,
    }));
    try {
      await deps.ledger.enqueueNotifications(rows);
      deps.onEnqueued?.();
    } catch (e) {
      deps.log.error(
        { event: event.type, key, err: errorMessage(e) },
        'a notification could not be written to the outbox',
      );
    }
  };

  return {
    emit(event) {
      const p = write(event);
      running.add(p);
      void p.finally(() => running.delete(p));
      return p;
    },
    async flush() {
      await Promise.all([...running]);
    },
  };
}
