/**
 * What a reload would change, in two parts: the settings only a restart may change (compared on the config as
 * loaded, everything but the policy: `keys`, `serve.tokens`, `operators` and `notify.hooks`), and a short account of
 * the policy's change (keys added or removed, caps and other fields changed, lists by the items added and removed,
 * per key and per mint; bearer tokens, operators and webhooks added, removed or changed) for the reload's audit entry
 * and answer.
 */
import type {
  CredentialsConfig,
  KeyConfig,
  NotifyHook,
  OperatorConfig,
  PricesConfig,
  SignerConfig,
  TokenConfig,
  TokenPolicy,
} from '../config/types';
import { canonicalJson } from './canonical-json';

const json = (v: unknown): string =>
  canonicalJson(JSON.parse(JSON.stringify(v ?? null, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x))));

/** What a reload replaces (the policy), as config paths; `source` is where the config was read from. */
const RELOADABLE: ReadonlySet<string> = new Set([
  'keys',
  'prices',
  'operators',
  'serve.tokens',
  'serve.credentials',
  'notify.hooks',
  'source',
]);

/** The settings, as config paths, whose value differs and which only a restart may change. */
export function restartOnlyChanges(running: SignerConfig, next: SignerConfig): string[] {
  const changed: string[] = [];
  const fields = new Set([...Object.keys(running), ...Object.keys(next)]);
  for (const field of [...fields].sort()) {
    if (RELOADABLE.has(field)) continue;
    const a = (running as unknown as Record<string, unknown>)[field];
    const b = (next as unknown as Record<string, unknown>)[field];
    if (json(a) === json(b)) continue;
    if (isPlainObject(a) && isPlainObject(b)) {
      // One level down, so the answer names `serve.listen` rather than all of `serve`.
      for (const sub of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
        if (RELOADABLE.has(`${field}.${sub}`)) continue;
        if (json(a[sub]) !== json(b[sub])) changed.push(`${field}.${sub}`);
      }
    } else changed.push(field);
  }
  // Of the credentials, the issued roots and the revoked ids are policy; the root key is read at start.
  const rootKey = (c: SignerConfig) => json(c.serve.credentials?.root_key ?? null);
  if (rootKey(running) !== rootKey(next)) changed.push('serve.credentials.root_key');
  return changed;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const scalar = (v: unknown): string => (v === undefined || v === null ? 'none' : json(v).replace(/^"|"$/g, ''));

/**
 * Items a list change names on each side; the rest are counted. A list of addresses can be long, and the change
 * is one line of the reload's answer and of its audit entry.
 */
export const MAX_LISTED_ITEMS = 4;

const absent = (v: unknown): v is null | undefined => v === undefined || v === null;
const isScalarList = (v: unknown): v is unknown[] =>
  Array.isArray(v) && v.every((x) => absent(x) || typeof x !== 'object');

/** `A, B, C, D and 3 more`: at most MAX_LISTED_ITEMS named. */
function someItems(items: readonly string[]): string {
  const named = items.slice(0, MAX_LISTED_ITEMS).join(', ');
  const more = items.length - MAX_LISTED_ITEMS;
  return more > 0 ? `${named} and ${String(more)} more` : named;
}

/**
 * A list field's change by its items: `added 2: A, B; removed 1: C`, `reordered` when only the order differs, and
 * `none → A, B` (or back) when the field is set or unset, since an unset list may mean "any" rather than "none".
 */
function listFieldChange(x: unknown[] | null | undefined, y: unknown[] | null | undefined): string {
  const items = (list: readonly unknown[]) => list.map(scalar);
  if (absent(x) || absent(y)) {
    const side = (v: unknown[] | null | undefined) =>
      absent(v) ? 'none' : v.length === 0 ? 'empty' : someItems(items(v));
    return `${side(x)} → ${side(y)}`;
  }
  const before = new Set(items(x));
  const after = new Set(items(y));
  const added = [...after].filter((i) => !before.has(i));
  const removed = [...before].filter((i) => !after.has(i));
  const parts = [
    ...(added.length > 0 ? [`added ${String(added.length)}: ${someItems(added)}`] : []),
    ...(removed.length > 0 ? [`removed ${String(removed.length)}: ${someItems(removed)}`] : []),
  ];
  return parts.length > 0 ? parts.join('; ') : 'reordered';
}

function fieldChanges(where: string, a: object, b: object, skip: readonly string[]): string[] {
  const out: string[] = [];
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  for (const f of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
    if (skip.includes(f) || json(ra[f]) === json(rb[f])) continue;
    const x = ra[f];
    const y = rb[f];
    const simple = (v: unknown) => absent(v) || typeof v !== 'object';
    const list = (v: unknown): v is unknown[] | null | undefined => absent(v) || isScalarList(v);
    if (simple(x) && simple(y)) out.push(`${where}.${f} ${scalar(x)} → ${scalar(y)}`);
    else if (list(x) && list(y)) out.push(`${where}.${f} ${listFieldChange(x, y)}`);
    else out.push(`${where}.${f} changed`);
  }
  return out;
}

/** How a list of the policy is told apart and named: each entry's id, and the words for its changes. */
interface ListNames<T> {
  id(entry: T): string;
  added(id: string): string;
  removed(id: string): string;
  /** The config path of an entry in both, before its field's name. */
  where(id: string): string;
  /** Fields not compared: the id, and those told in `more`. */
  skip: readonly string[];
  /** What else changed of an entry in both. */
  more?(old: T, now: T): string[];
}

/** Entries added, then removed, then each entry in both with its changed fields (and `more`), in list order. */
function listChanges<T extends object>(a: readonly T[], b: readonly T[], names: ListNames<T>): string[] {
  const out: string[] = [];
  const ids = (list: readonly T[]) => new Map(list.map((entry) => [names.id(entry), entry]));
  const before = ids(a);
  const after = ids(b);
  for (const id of after.keys()) if (!before.has(id)) out.push(names.added(id));
  for (const id of before.keys()) if (!after.has(id)) out.push(names.removed(id));
  for (const [id, now] of after) {
    const old = before.get(id);
    if (!old) continue;
    out.push(...fieldChanges(names.where(id), old, now, names.skip), ...(names.more?.(old, now) ?? []));
  }
  return out;
}

/**
 * One line per change: `+key`, `-key`, `keys.k.daily_lamport_cap 1000 → 500`, `keys.k.transfer_to added 1: A`,
 * `keys.k.tokens +MINT`.
 */
export function policyChanges(a: readonly KeyConfig[], b: readonly KeyConfig[]): string[] {
  return listChanges(a, b, {
    id: (k) => k.name,
    added: (name) => `+key ${name}`,
    removed: (name) => `-key ${name}`,
    where: (name) => `keys.${name}`,
    skip: ['name', 'tokens'],
    more: (old, now) =>
      listChanges<TokenPolicy>(old.tokens ?? [], now.tokens ?? [], {
        id: (t) => t.mint,
        added: (mint) => `keys.${now.name}.tokens +${mint}`,
        removed: (mint) => `keys.${now.name}.tokens -${mint}`,
        where: (mint) => `keys.${now.name}.tokens[${mint}]`,
        skip: ['mint'],
      }),
  });
}

/**
 * Bearer tokens added, removed, given other keys, or rotated (a new hash under the same name). The hashes are not
 * shown: the answer and the audit entry say a token changed, not what it is.
 */
export function bearerTokenChanges(a: readonly TokenConfig[], b: readonly TokenConfig[]): string[] {
  return listChanges(a, b, {
    id: (t) => t.name,
    added: (name) => `+token ${name}`,
    removed: (name) => `-token ${name}`,
    where: (name) => `serve.tokens.${name}`,
    skip: ['name', 'sha256'],
    more: (old, now) => (old.sha256 === now.sha256 ? [] : [`serve.tokens.${now.name} rotated`]),
  });
}

/**
 * Credentials issued or withdrawn (`+credential planner`), given other keys, and revocation ids added or removed
 * (by their first 16 characters: enough to find one, short enough for one line).
 */
export function credentialChanges(a: CredentialsConfig | null, b: CredentialsConfig | null): string[] {
  const out = listChanges(a?.issued ?? [], b?.issued ?? [], {
    id: (c) => c.name,
    added: (name) => `+credential ${name}`,
    removed: (name) => `-credential ${name}`,
    where: (name) => `serve.credentials.issued.${name}`,
    skip: ['name'],
  });
  const before = new Set(a?.revoked ?? []);
  const after = new Set(b?.revoked ?? []);
  const short = (ids: string[]) => someItems(ids.map((id) => `${id.slice(0, 16)}…`));
  const revoked = [...after].filter((id) => !before.has(id));
  const restored = [...before].filter((id) => !after.has(id));
  if (revoked.length > 0) out.push(`serve.credentials.revoked added ${revoked.length}: ${short(revoked)}`);
  if (restored.length > 0) out.push(`serve.credentials.revoked removed ${restored.length}: ${short(restored)}`);
  return out;
}

/** Operators added, removed, or given another role: `+operator bob`, `operators.alice.role approver → admin`. */
export function operatorChanges(a: readonly OperatorConfig[], b: readonly OperatorConfig[]): string[] {
  return listChanges(a, b, {
    id: (o) => o.name,
    added: (name) => `+operator ${name}`,
    removed: (name) => `-operator ${name}`,
    where: (name) => `operators.${name}`,
    skip: ['name'],
  });
}

/**
 * Webhooks added, removed, or told of other events, by id: the URL may carry a secret (a Slack webhook's path is
 * one), so it is never shown; a new URL is a new id.
 */
/**
 * What changed of `prices`: each bound, and each asset's feed added, removed or moved to another account or feed id
 * (`prices.feeds.SOL account A → B`).
 */
export function priceChanges(a: PricesConfig | null, b: PricesConfig | null): string[] {
  const changes: string[] = [];
  const none = { maxAgeS: null, maxConfidenceBps: null, allowPartial: null };
  const [ab, bb] = [a?.bounds ?? none, b?.bounds ?? none];
  const bounds = [
    ['max_age_s', ab.maxAgeS, bb.maxAgeS],
    ['max_confidence_bps', ab.maxConfidenceBps, bb.maxConfidenceBps],
    ['allow_partial_verification', ab.allowPartial, bb.allowPartial],
  ] as const;
  for (const [name, was, now] of bounds)
    if (was !== now) changes.push(`prices.${name} ${scalar(was)} → ${scalar(now)}`);
  const [af, bf] = [a?.feeds ?? new Map<string, never>(), b?.feeds ?? new Map<string, never>()];
  for (const asset of [...new Set([...af.keys(), ...bf.keys()])].sort()) {
    const [was, now] = [af.get(asset), bf.get(asset)];
    if (was === undefined) changes.push(`+prices.feeds ${asset}`);
    else if (now === undefined) changes.push(`-prices.feeds ${asset}`);
    else {
      if (was.account !== now.account) changes.push(`prices.feeds.${asset} account ${was.account} → ${now.account}`);
      if (was.feedId !== now.feedId) changes.push(`prices.feeds.${asset} feed_id ${was.feedId} → ${now.feedId}`);
    }
  }
  return changes;
}

export function hookChanges(a: readonly NotifyHook[], b: readonly NotifyHook[]): string[] {
  return listChanges(a, b, {
    id: (h) => h.id,
    added: (id) => `+hook ${id}`,
    removed: (id) => `-hook ${id}`,
    where: (id) => `notify.hooks.${id}`,
    skip: ['id', 'url'],
  });
}
