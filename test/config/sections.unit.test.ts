/**
 * Config by section: each section's defaults, stated once in its schema, are what the loader gives a config that
 * sets nothing and what code that builds a config by hand gets; the section types are read from the schema; and
 * config imports nothing from the modules above it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { keySetting } from '../../src/config/sections/keys';
import { defaultKeyStores } from '../../src/config/sections/key-stores';
import {
  DEFAULT_SOCKET_LIMITS,
  DEFAULT_TIMINGS,
  NOTIFY_DELIVERY_DEFAULTS,
  type KeyConfig,
  type ServeConfig,
  type Timings,
  type TokenPolicy,
} from '../../src/config/types';

const PUBKEY = '4Nd1mYwJ3d8q4t1nUQ8e3YqKkX2n1Fbq9xHk2wz3h5Qv';

describe('a config that sets nothing', () => {
  const config = loadConfig({ env: {} });

  test('gets the timings the code-built defaults give', () => {
    expect(config.timings).toEqual(DEFAULT_TIMINGS);
  });

  test('gets the socket limits the code-built defaults give, and a 64 KiB body limit', () => {
    expect(config.serve).toMatchObject({ ...DEFAULT_SOCKET_LIMITS, body_limit_bytes: 65_536 });
  });

  test('gets the key stores a config without key_stores means', () => {
    expect(config.key_stores).toEqual(defaultKeyStores(config.key_dir));
  });

  test('gets the delivery settings a service without notify uses', () => {
    expect(config.notify?.delivery).toEqual(NOTIFY_DELIVERY_DEFAULTS);
  });
});

describe('keySetting', () => {
  const loaded = loadConfig({ env: {}, overrides: { keys: { play: { class: 'session', pubkey: PUBKEY } } } })
    .keys[0] as KeyConfig;
  const byHand: KeyConfig = {
    name: 'play',
    class: 'session',
    pubkey: PUBKEY,
    profile: null,
    approval: 'auto',
    transfer_to: [],
    extra_programs: [],
    rate_limit_per_minute: 30,
    daily_lamport_cap: 50_000_000,
    allow_unattended: false,
  };

  test('reads a setting a hand-built key leaves out as the loader fills it', () => {
    for (const name of ['store', 'sign_only', 'sign_messages', 'per_tx_lamports', 'allow_token_ops'] as const)
      expect([name, keySetting(byHand, name)]).toEqual([name, loaded[name]]);
  });

  test('reads a setting the key sets as set', () => {
    expect(keySetting({ ...byHand, store: 'pkcs11', sign_only: false }, 'store')).toBe('pkcs11');
    expect(keySetting({ ...byHand, sign_only: false }, 'sign_only')).toBe(false);
  });
});

/** True when A and B are the same type. The section types are read from the schema's formats; a wrong derivation
 * fails `npm run typecheck` here. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export const derivedTypes = [
  true satisfies Same<KeyConfig['class'], 'session' | 'wallet'>,
  true satisfies Same<KeyConfig['approval'], 'auto' | 'confirm' | 'deny'>,
  true satisfies Same<KeyConfig['store'], 'file' | 'encrypted' | 'pkcs11' | undefined>,
  true satisfies Same<KeyConfig['per_tx_lamports'], number | null | undefined>,
  true satisfies Same<TokenPolicy['per_day'], bigint>,
  true satisfies Same<TokenPolicy['per_tx'], bigint | null>,
  true satisfies Same<ServeConfig['body_limit_bytes'], number>,
  true satisfies Same<ServeConfig['metrics'], { host: string; port: number } | null>,
  true satisfies Same<Timings['rpc_retries'], number>,
];

test('config imports nothing from the modules above it (only util/ besides itself)', () => {
  const root = path.join(__dirname, '../../src/config');
  const files = fs.readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
  const upward = files.flatMap((f) => {
    const text = fs.readFileSync(path.join(root, f), 'utf8');
    return [...text.matchAll(/from '(\.[^']*)'/g)]
      .map((m) => path.relative(path.join(__dirname, '../../src'), path.resolve(root, path.dirname(f), m[1] ?? '')))
      .filter((target) => !target.startsWith('config') && !target.startsWith('util'))
      .map((target) => `${f} → ${target}`);
  });
  expect(upward).toEqual([]);
});
