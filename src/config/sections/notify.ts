/**
 * `notify` and `notify_delivery`: the webhooks told of approvals, halts and refusals by a cap, and how hard the
 * outbox tries to deliver to them (docs/notifications.md).
 */
import { createHash } from 'node:crypto';
import { fail, validateEntry } from '../fail';
import { defaultsOf, section, type Infer } from '../setting';

/** What a webhook can be told of (docs/notifications.md). */
export const NOTIFY_EVENTS = [
  'approval.requested',
  'approval.decided',
  'key.halted',
  'key.resumed',
  'sign.refused_by_cap',
  'treasury.mismatch',
  'treasury.refill_due',
] as const;
export type NotifyEvent = (typeof NOTIFY_EVENTS)[number];

export const notifySchema = section({
  notify: {
    doc: "Webhooks told of approvals requested and decided, keys halted and resumed, and signs refused by a cap: a list of {url, events, secret_file, format} (docs/notifications.md). Delivered from a durable outbox in the ledger, signed the Standard Webhooks way, never on a sign's path.",
    format: 'object-list',
    default: [],
  },
  notify_delivery: {
    timeout_ms: {
      doc: 'One delivery attempt: a receiver that has not answered within this long is cut off, and the attempt counts as failed.',
      format: 'positive-int',
      default: 10_000,
      env: 'SIGNER_NOTIFY_TIMEOUT_MS',
    },
    max_attempts: {
      doc: 'Attempts of one notification before it is marked failed (visible in `notify list`, the metrics and the console).',
      format: 'positive-int',
      default: 15,
      env: 'SIGNER_NOTIFY_MAX_ATTEMPTS',
    },
    max_age_hours: {
      doc: 'A notification not delivered this many hours after its event is marked failed, whatever its attempts.',
      format: 'positive-int',
      default: 24,
      env: 'SIGNER_NOTIFY_MAX_AGE_HOURS',
    },
    backoff_base_ms: {
      doc: 'Ceiling of the wait before the first retry; it doubles per retry (a random wait below it: full jitter).',
      format: 'positive-int',
      default: 1_000,
      env: 'SIGNER_NOTIFY_BACKOFF_BASE_MS',
    },
    backoff_max_ms: {
      doc: 'Largest ceiling of the wait between two attempts.',
      format: 'positive-int',
      default: 600_000,
      env: 'SIGNER_NOTIFY_BACKOFF_MAX_MS',
    },
    poll_ms: {
      doc: "How often the outbox is read for due notifications (those another process wrote, such as a CLI halt, and retries); this process's own events are sent at once.",
      format: 'positive-int',
      default: 2_000,
      env: 'SIGNER_NOTIFY_POLL_MS',
    },
  },
});

/** One entry of `notify:`. */
export const notifyHookSchema = section({
  url: {
    doc: 'Where the events are POSTed: an http:// or https:// URL. It is never logged or shown; logs, metrics and `notify list` name the hook by its host and a hash of the URL.',
    format: 'non-empty-string',
    default: null,
    sensitive: true,
  },
  events: {
    doc: `The events this hook is told of, any of ${NOTIFY_EVENTS.join(', ')}; the default is all of them.`,
    format: 'string-list',
    default: [...NOTIFY_EVENTS],
  },
  secret_file: {
    doc: 'File holding the signing secret in the Standard Webhooks form `whsec_<base64>` (a mounted secret; surrounding whitespace is ignored), read at start. Needed by format `standard`; optional for `slack`. Never put the secret in the config.',
    format: 'string-or-null',
    default: null,
    nullable: true,
  },
  format: {
    doc: '`standard`: the event as JSON `{type, timestamp, data}`; `slack`: a Slack-compatible `{text}` (an incoming webhook). Both carry the Standard Webhooks headers when a secret is set.',
    format: ['standard', 'slack'],
    default: 'standard',
  },
});

type HookEntry = Infer<typeof notifyHookSchema>;

export type NotifyFormat = HookEntry['format'];

/** One webhook of `notify:`, checked; `secret_file` resolved, and read at start by the service. */
export type NotifyHook = Omit<HookEntry, 'events'> & {
  /** How logs, metrics and the outbox name it: its host and a hash of its URL (the URL may carry a secret). */
  id: string;
  events: NotifyEvent[];
};

export type NotifyDelivery = Infer<typeof notifySchema>['notify_delivery'];

export const NOTIFY_DELIVERY_DEFAULTS: Readonly<NotifyDelivery> = Object.freeze(
  defaultsOf(notifySchema.notify_delivery),
);

export interface NotifyConfig {
  hooks: NotifyHook[];
  delivery: NotifyDelivery;
}

/**
 * A hook's name in logs, metrics and the outbox: the URL's host and the first 8 hex of its sha256. The URL itself
 * may carry a secret (a Slack incoming webhook's path is one), so it is shown nowhere.
 */
export function hookId(url: string): string {
  const host = new URL(url).host;
  return `${host}~${createHash('sha256').update(url).digest('hex').slice(0, 8)}`;
}

/** `notify:` entries, checked: an http(s) URL, known events, a format; the secret file is read by the service. */
export function buildNotify(
  raw: readonly unknown[],
  delivery: NotifyDelivery,
  resolve: (p: string) => string,
): NotifyConfig {
  const hooks = raw.map((entry, i): NotifyHook => {
    const where = `notify[${i}]`;
    const e = validateEntry(notifyHookSchema, entry, where);
    let url: URL;
    try {
      url = new URL(e.url);
    } catch {
      fail(`${where}.url: not a URL; a webhook is an http:// or https:// URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      fail(`${where}.url: a webhook is an http:// or https:// URL, not ${url.protocol}//`);
    if (url.username !== '' || url.password !== '')
      fail(`${where}.url: credentials in the URL are not allowed; the hook is authenticated by its signing secret`);
    const events = e.events.length === 0 ? [...NOTIFY_EVENTS] : e.events;
    for (const ev of events) {
      if (!(NOTIFY_EVENTS as readonly string[]).includes(ev))
        fail(`${where}.events: unknown event ${JSON.stringify(ev)}; use any of ${NOTIFY_EVENTS.join(', ')}`);
    }
    const id = hookId(url.toString());
    if (e.secret_file === null && e.format === 'standard')
      fail(`${where} (${id}).secret_file: a standard webhook needs its signing secret (a whsec_… file)`);
    return {
      id,
      url: url.toString(),
      events: [...new Set(events)] as NotifyEvent[],
      secret_file: e.secret_file === null ? null : resolve(e.secret_file),
      format: e.format,
    };
  });
  const seen = new Set<string>();
  for (const h of hooks) {
    if (seen.has(h.id)) fail(`notify: the hook ${h.id} is listed twice; list each URL once with all its events`);
    seen.add(h.id);
  }
  return { hooks, delivery: { ...delivery } };
}
