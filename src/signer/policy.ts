/**
 * The policy a service runs: the keys with their caps, destinations and programs, the prices their dollar caps are
 * valued at, the bearer tokens that may use them, the operators who approve and use the console, and the webhooks
 * told of what happens: the part of the config
 * `reload` may replace while the service runs (docs/policy.md, "Reload").
 *
 * The engine reads it through a holder: each sign takes the key's policy when it begins and is judged by that one
 * to its end, so a reload changes the judgement of every sign that begins after it; a sign that waited for an
 * operator is judged after the decision by the policy in force then as well (flow/after-approval.ts;
 * docs/decisions.md, "Reload").
 */
import { createHash } from 'node:crypto';
import type {
  CredentialsConfig,
  KeyConfig,
  NotifyHook,
  OperatorConfig,
  PricesConfig,
  SignerConfig,
  TokenConfig,
} from '../config/types';
import { canonicalJson } from './canonical-json';
import { createKeySet, type KeySet } from '../keys/key-set';
import { createKeyStores, type KeyStores } from '../keys/stores';
import { createKeyAccess, type KeyAccess } from './key-access';

export interface Policy {
  /** sha256 hex of the policy's canonical JSON: two replicas with the same keys and tokens show the same hash. */
  readonly hash: string;
  readonly keys: readonly KeyConfig[];
  /** The bearer tokens agents present, each with the keys it may use. */
  readonly tokens: readonly TokenConfig[];
  /** Credentials (docs/credentials.md): the roots issued and the ids revoked; null when they are off. */
  readonly credentials: CredentialsConfig | null;
  /** Who votes on approvals and signs in to the console (none: the host's single operator). */
  readonly operators: readonly OperatorConfig[];
  /** The webhooks (`notify`), told of halts, approvals and refusals. */
  readonly hooks: readonly NotifyHook[];
  /** Where `usd` caps get their prices, and how old or uncertain one may be (docs/pricing.md); null: none. */
  readonly prices: PricesConfig | null;
  readonly access: KeyAccess;
  /** This policy's keys, opened from stores every policy of the service shares (one HSM connection, say). */
  readonly keySet: KeySet;
  readonly keyStores: KeyStores;
}

export interface PolicyHolder {
  current(): Policy;
  replace(next: Policy): void;
}

type PolicyFields = Pick<SignerConfig, 'keys' | 'serve' | 'operators' | 'notify'> &
  Partial<Pick<SignerConfig, 'prices'>>;

/** `prices` as plain JSON: the bounds, and the feeds (a map) as a list in asset order. */
export function pricesDocument(prices: PricesConfig): unknown {
  return {
    bounds: prices.bounds,
    feeds: [...prices.feeds.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([asset, f]) => ({ asset, account: f.account, feed_id: f.feedId })),
  };
}

/** The policy fields of a config as plain JSON (token amounts are bigint: written as decimal strings). */
export function policyDocument(config: PolicyFields): unknown {
  return JSON.parse(
    JSON.stringify(
      {
        keys: config.keys,
        tokens: config.serve.tokens,
        operators: config.operators ?? [],
        hooks: config.notify?.hooks ?? [],
        // Only when set: a policy without prices keeps the hash it had before they were part of it.
        ...(config.prices ? { prices: pricesDocument(config.prices) } : {}),
        // Only when on: a policy without credentials keeps the hash it had before they existed.
        ...(config.serve.credentials
          ? { credentials: { issued: config.serve.credentials.issued, revoked: config.serve.credentials.revoked } }
          : {}),
      },
      (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v),
    ),
  );
}

export function policyHash(config: PolicyFields): string {
  return createHash('sha256')
    .update(canonicalJson(policyDocument(config)))
    .digest('hex');
}

/**
 * The policy of a config. The key stores are made once per service and handed on from policy to policy (a reload
 * cannot change them: key_dir and key_stores need a restart), so a token is never connected to twice.
 */
export function policyFor(
  config: PolicyFields & Pick<SignerConfig, 'key_dir' | 'key_stores'>,
  stores: KeyStores = createKeyStores(config),
): Policy {
  return {
    hash: policyHash(config),
    keys: config.keys,
    tokens: config.serve.tokens,
    credentials: config.serve.credentials ?? null,
    operators: config.operators ?? [],
    hooks: config.notify?.hooks ?? [],
    prices: config.prices ?? null,
    access: createKeyAccess(config.keys),
    keySet: createKeySet(config, process.env, stores),
    keyStores: stores,
  };
}

/** A policy no reload replaces (the CLI's own engine, tests). */
export const fixedPolicy =
  (policy: Policy): (() => Policy) =>
  () =>
    policy;

export function createPolicyHolder(first: Policy): PolicyHolder {
  let policy = first;
  return {
    current: () => policy,
    replace(next) {
      policy = next;
    },
  };
}

/** Key access that always asks the current policy: the engine's one indirection. */
export function liveAccess(current: () => Policy): KeyAccess {
  return {
    get all() {
      return current().access.all;
    },
    forPayload: (principal, named, feePayer) => current().access.forPayload(principal, named, feePayer),
    select: (principal, named) => current().access.select(principal, named),
    byName: (name) => current().access.byName(name),
  };
}

/** Keys of the current policy (a reload opens and verifies the new policy's before it takes over). */
export function liveKeySet(current: () => Policy): KeySet {
  return {
    signerFor: (key) => current().keySet.signerFor(key),
    verify: () => current().keySet.verify(),
    health: () => current().keySet.health(),
    status: (key) => current().keySet.status(key),
    close: () => current().keySet.close(),
  };
}
