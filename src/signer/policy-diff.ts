/**
 * What a reload would change, in two parts: the settings only a restart may change (compared on the config as
 * loaded, everything but the policy: `keys`, `serve.tokens`, `operators` and `notify.hooks`), and a short account of
 * the policy's change (keys added or removed, caps and other fields changed, per key and per mint; bearer tokens,
 * operators and webhooks added, removed or changed) for the reload's audit entry and answer.
 */
import type { KeyConfig, NotifyHook, OperatorConfig, SignerConfig, TokenConfig, TokenPolicy } from '../config/types';
import { canonicalJson } from './canonical-json';

const json = (v: unknown): string =>
  canonicalJson(JSON.parse(JSON.stringify(v ?? null, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x))));

/** What a reload replaces (the policy), as config paths; `source` is where the config was read from. */
const RELOADABLE: ReadonlySet<string> = new Set(['keys', 'operators', 'serve.tokens', 'notify.hooks', 'source']);

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
  return changed;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const scalar = (v: unknown): string => (v === undefined || v === null ? 'none' : json(v).replace(/^"|"$/g, ''));

function fieldChanges(where: string, a: object, b: object, skip: readonly string[]): string[] {
  const out: string[] = [];
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  for (const f of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
    if (skip.includes(f) || json(ra[f]) === json(rb[f])) continue;
    const x = ra[f];
    const y = rb[f];
    const simple = (v: unknown) => v === undefined || v === null || typeof v !== 'object';
    out.push(simple(x) && simple(y) ? `${where}.${f} ${scalar(x)} → ${scalar(y)}` : `${where}.${f} changed`);
  }
  return out;
}

function tokenChanges(key: string, a: readonly TokenPolicy[], b: readonly TokenPolicy[]): string[] {
  const out: string[] = [];
  for (const t of b) if (!a.some((o) => o.mint === t.mint)) out.push(`keys.${key}.tokens +${t.mint}`);
  for (const t of a) if (!b.some((n) => n.mint === t.mint)) out.push(`keys.${key}.tokens -${t.mint}`);
  for (const t of b) {
    const old = a.find((o) => o.mint === t.mint);
    if (old) out.push(...fieldChanges(`keys.${key}.tokens[${t.mint}]`, old, t, ['mint']));
  }
  return out;
}

/** One line per change: `+key`, `-key`, `keys.k.daily_lamport_cap 1000 → 500`, `keys.k.tokens +MINT`. */
/**
 * Bearer tokens added, removed, given other keys, or rotated (a new hash under the same name). The hashes are not
 * shown: the answer and the audit entry say a token changed, not what it is.
 */
export function bearerTokenChanges(a: readonly TokenConfig[], b: readonly TokenConfig[]): string[] {
  const out: string[] = [];
  for (const t of b) if (!a.some((x) => x.name === t.name)) out.push(`+token ${t.name}`);
  for (const t of a) if (!b.some((x) => x.name === t.name)) out.push(`-token ${t.name}`);
  for (const t of b) {
    const old = a.find((x) => x.name === t.name);
    if (!old) continue;
    if (old.sha256 !== t.sha256) out.push(`serve.tokens.${t.name} rotated`);
    out.push(...fieldChanges(`serve.tokens.${t.name}`, old, t, ['name', 'sha256']));
  }
  return out;
}

/**
 * Webhooks added, removed, or told of other events, by id: the URL may carry a secret (a Slack webhook's path is
 * one), so it is never shown; a new URL is a new id.
 */
export function hookChanges(a: readonly NotifyHook[], b: readonly NotifyHook[]): string[] {
  const out: string[] = [];
  for (const h of b) if (!a.some((x) => x.id === h.id)) out.push(`+hook ${h.id}`);
  for (const h of a) if (!b.some((x) => x.id === h.id)) out.push(`-hook ${h.id}`);
  for (const h of b) {
    const old = a.find((x) => x.id === h.id);
    if (old) out.push(...fieldChanges(`notify.hooks.${h.id}`, old, h, ['id', 'url']));
  }
  return out;
}

/** Operators added, removed, or given another role: `+operator bob`, `operators.alice.role approver → admin`. */
export function operatorChanges(a: readonly OperatorConfig[], b: readonly OperatorConfig[]): string[] {
  const out: string[] = [];
  for (const o of b) if (!a.some((x) => x.name === o.name)) out.push(`+operator ${o.name}`);
  for (const o of a) if (!b.some((x) => x.name === o.name)) out.push(`-operator ${o.name}`);
  for (const o of b) {
    const old = a.find((x) => x.name === o.name);
    if (old) out.push(...fieldChanges(`operators.${o.name}`, old, o, ['name']));
  }
  return out;
}

export function policyChanges(a: readonly KeyConfig[], b: readonly KeyConfig[]): string[] {
  const out: string[] = [];
  for (const k of b) if (!a.some((o) => o.name === k.name)) out.push(`+key ${k.name}`);
  for (const k of a) if (!b.some((n) => n.name === k.name)) out.push(`-key ${k.name}`);
  for (const k of b) {
    const old = a.find((o) => o.name === k.name);
    if (!old) continue;
    out.push(...fieldChanges(`keys.${k.name}`, old, k, ['name', 'tokens']));
    out.push(...tokenChanges(k.name, old.tokens ?? [], k.tokens ?? []));
  }
  return out;
}
