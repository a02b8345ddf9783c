/**
 * A real world for engine tests: the LiteSVM chain behind its JSON-RPC endpoint, real key files in a 0700
 * directory, a real SQLite ledger, and the engine opened on them. Timings are shortened so the confirmation
 * loop, expiry and approvals run in well under a second.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { localCluster } from '../../src/config/clusters';
import type {
  NotifyConfig,
  KeyConfig,
  LedgerConfig,
  OperatorConfig,
  PricesConfig,
  KeyStoreKind,
  KeyStoresConfig,
  SecretRef,
  SignerConfig,
  Timings,
} from '../../src/config/types';
import { DEFAULT_SOCKET_LIMITS, DEFAULT_TIMINGS } from '../../src/config/types';
import { createKeyStores, defaultKeyStores } from '../../src/keys/stores';
import { openLedger } from '../../src/ledger/open';
import type { Ledger } from '../../src/ledger/types';
import { startLocalnet, type Localnet } from '../../src/localnet/server';
import { openEngine } from '../../src/signer';
import type { Report } from '../../src/signer/report';
import type { Principal, SignerEngine } from '../../src/signer/types';
import { randomAddress, transferInstruction, payload } from './payloads';
import { rpcResult } from './rpc';
import { makeSoftHsmToken, type SoftHsmToken } from './softhsm';
import { reasonAgrees } from './reasons';

export const FAST_TIMINGS: Timings = {
  ...DEFAULT_TIMINGS,
  rpc_timeout_ms: 2_000,
  poll_interval_ms: 10,
  confirm_deadline_ms: 5_000,
  max_rpc_failures: 60,
  rebroadcast_every: 3,
  metadata_attempts: 5,
  approval_timeout_ms: 3_000,
  approval_poll_ms: 10,
};

/**
 * Timings for the service run as its own process beside other processes on this 2-core machine: short enough for
 * a test, long enough that nothing ends `unknown` under load.
 */
export const PROCESS_TIMINGS: Partial<Timings> = {
  rpc_timeout_ms: 5_000,
  poll_interval_ms: 10,
  confirm_deadline_ms: 30_000,
  max_rpc_failures: 60,
  rebroadcast_every: 5,
  metadata_attempts: 5,
  approval_timeout_ms: 30_000,
  approval_poll_ms: 20,
};

export interface WorldKey extends KeyConfig {
  destination: string;
}

export interface World {
  dir: string;
  config: SignerConfig;
  localnet: Localnet;
  ledger: Ledger;
  engine: SignerEngine;
  keys: Record<string, WorldKey>;
  reports: Report[];
  operator: Principal;
  /** The SoftHSM2 token of a `pkcs11` world, null otherwise. */
  token: SoftHsmToken | null;
  /** A payload moving `lamports` from a key to its allowed destination. */
  transfer(keyName: string, lamports: number, summary?: string): Record<string, unknown>;
  /**
   * A restart of the process: closes the engine (and its ledger), runs `whileStopped` (the chain keeps running), then
   * opens a new ledger and engine on the same config and state; `ledger` and `engine` are the new ones after.
   */
  restart(whileStopped?: () => Promise<void>): Promise<void>;
  close(): Promise<void>;
}

export interface WorldOptions {
  keys?: Record<string, Partial<KeyConfig>>;
  timings?: Partial<Timings>;
  blockIntervalMs?: number;
  /** Blocks after landing until `confirmed` (the localnet's default 1; a real cluster about 2). */
  confirmAfterBlocks?: number;
  fundLamports?: number;
  gamePrograms?: string[];
  /** Put the engine on another RPC URL (e.g. a proxy in front of the localnet). */
  rpcUrl?: (localnetUrl: string) => string;
  /**
   * The store every key is created in (`file` by default): `encrypted` seals them with a passphrase from a file
   * in the world's folder, `pkcs11` generates them in a fresh SoftHSM2 token with its PIN in such a file.
   */
  store?: KeyStoreKind;
  /** Webhooks: the engine writes their events to the ledger's outbox (a test starts the deliverer itself). */
  notify?: NotifyConfig;
  /** The ledger (a SQLite file in the world's state directory by default). */
  ledger?: LedgerConfig;
  /** Who votes on approvals (none by default: the host's single operator). */
  operators?: OperatorConfig[];
  /** Where `usd` caps get their prices (none by default). */
  prices?: PricesConfig;
}

/** Settings of the world's stores: a low scrypt factor keeps encrypted worlds quick (production uses 18). */
function worldKeyStores(
  dir: string,
  keyDir: string,
  store: KeyStoreKind,
): { stores: KeyStoresConfig; token: SoftHsmToken | null } {
  const stores = defaultKeyStores(keyDir);
  let token: SoftHsmToken | null = null;
  const secret = path.join(dir, 'secret');
  if (store === 'encrypted') {
    fs.writeFileSync(secret, 'correct horse battery staple\n', { mode: 0o600 });
    stores.encrypted = { ...stores.encrypted, passphrase: { file: secret }, scrypt_log_n: 10 };
  }
  if (store === 'pkcs11') {
    token = makeSoftHsmToken();
    fs.writeFileSync(secret, `${token.pin}\n`, { mode: 0o600 });
    stores.pkcs11 = token.settings({ file: secret });
  }
  return { stores, token };
}

export async function makeWorld(opts: WorldOptions = {}): Promise<World> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signer-world-'));
  const keyDir = path.join(dir, 'keys');
  const specs = opts.keys ?? { alpha: {} };
  const keys: Record<string, WorldKey> = {};
  const keyConfigs: KeyConfig[] = [];
  const store = opts.store ?? 'file';
  const { stores: keyStores, token } = worldKeyStores(dir, keyDir, store);
  // The keys are made through the store as `key new` makes them; closed before the engine opens its own.
  const maker = createKeyStores({ key_dir: keyDir, key_stores: keyStores });
  for (const [name, over] of Object.entries(specs)) {
    const pubkey = await maker.store(store).create(name);
    const destination = randomAddress();
    const keyConfig: KeyConfig = {
      name,
      class: 'session',
      pubkey,
      profile: null,
      approval: 'auto',
      transfer_to: [destination],
      extra_programs: [],
      rate_limit_per_minute: 1000,
      daily_lamport_cap: 10_000_000_000,
      allow_unattended: false,
      store,
      ...over,
    };
    keyConfigs.push(keyConfig);
    keys[name] = { ...keyConfig, destination };
  }
  await maker.close();
  const fundLamports = opts.fundLamports ?? 50_000_000_000;
  const localnet = await startLocalnet({
    port: 0,
    blockIntervalMs: opts.blockIntervalMs ?? 20,
    confirmAfterBlocks: opts.confirmAfterBlocks,
    fund: Object.values(keys).map((k) => ({ address: k.pubkey, lamports: fundLamports })),
  });
  const games = (opts.gamePrograms ?? []).map((address, i) => ({ label: `game-${i}`, address }));
  const config: SignerConfig = {
    source: null,
    cluster: {
      ...localCluster({
        rpc_url: opts.rpcUrl ? opts.rpcUrl(localnet.url) : localnet.url,
        game_programs: games,
        player_profile: null,
      }),
      genesis_hash: localnet.genesisHash,
      // Subscriptions go to the chain itself: the proxies tests put in front carry HTTP only, and a WebSocket
      // refused there would turn every confirmation into polling.
      ...(opts.rpcUrl ? { ws_urls: [localnet.wsUrl] } : {}),
    },
    key_dir: keyDir,
    key_stores: keyStores,
    state_dir: path.join(dir, 'state'),
    keys: keyConfigs.sort((a, b) => a.name.localeCompare(b.name)),
    ledger: opts.ledger ?? { store: 'sqlite', path: path.join(dir, 'state', 'ledger.sqlite') },
    timings: { ...FAST_TIMINGS, ...opts.timings },
    serve: {
      listen: { host: '127.0.0.1', port: 0 },
      allowed_hosts: ['127.0.0.1', 'localhost'],
      tokens: [],
      max_in_flight: 32,
      max_in_flight_per_token: 16,
      rate_limit_per_minute: 600,
      body_limit_bytes: 1_048_576,
      ...DEFAULT_SOCKET_LIMITS,
      drain_ms: 1_000,
      param_headers: true,
      metrics: null,
    },
    localnet: null,
    log_level: 'silent',
    ...(opts.notify === undefined ? {} : { notify: opts.notify }),
    ...(opts.operators === undefined ? {} : { operators: opts.operators }),
    ...(opts.prices === undefined ? {} : { prices: opts.prices }),
  };
  const reports: Report[] = [];
  const open = async (): Promise<{ ledger: Ledger; engine: SignerEngine }> => {
    const ledger = await openLedger(config.ledger);
    const engine = await openEngine(config, {
      ledger,
      onReport: (_t, r) => {
        reports.push(r);
        // A report that breaks the rule fails the test that asked for it, at the call.
        const broken = reasonAgrees(r);
        if (broken !== null) throw new Error(`report breaks the reason rule: ${broken}`);
      },
    });
    return { ledger, engine };
  };
  const { ledger, engine } = await open();
  const world: World = {
    dir,
    config,
    localnet,
    ledger,
    engine,
    keys,
    reports,
    operator: { kind: 'operator' },
    token,
    transfer(keyName, lamports, summary = 'test transfer') {
      const k = keys[keyName]!;
      return payload(k.pubkey, [transferInstruction(k.pubkey, k.destination, lamports)], { summary });
    },
    async restart(whileStopped) {
      await world.engine.close();
      await whileStopped?.();
      Object.assign(world, await open());
    },
    async close() {
      await world.engine.close();
      await localnet.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  return world;
}

export async function balanceOf(world: World, address: string): Promise<number> {
  const r = await rpcResult<{ value: number }>(world.localnet.url, 'getBalance', [
    address,
    { commitment: 'confirmed' },
  ]);
  return r.value;
}

/** The world's config as the YAML file the binaries read (same keys, ledger, chain and timings). */
export function worldConfigDocument(world: World, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const c = world.config;
  return {
    cluster: 'local',
    rpc_url: c.cluster.rpc_url,
    key_dir: c.key_dir,
    state_dir: c.state_dir,
    ledger: { store: 'sqlite', path: (c.ledger as { path: string }).path },
    log_level: 'warn',
    timings: c.timings,
    keys: Object.fromEntries(
      c.keys.map((k) => [
        k.name,
        {
          class: k.class,
          store: k.store ?? 'file',
          pubkey: k.pubkey,
          approval: k.approval,
          transfer_to: k.transfer_to,
          extra_programs: k.extra_programs,
          rate_limit_per_minute: k.rate_limit_per_minute,
          daily_lamport_cap: k.daily_lamport_cap,
          allow_unattended: k.allow_unattended,
          ...(k.approvals ? { approvals: k.approvals } : {}),
        },
      ]),
    ),
    key_stores: keyStoresDocument(c.key_stores),
    ...extra,
  };
}

/** `key_stores` as the config file spells it (a secret's source as `*_file` or `*_env`). */
function keyStoresDocument(stores: KeyStoresConfig | undefined): Record<string, unknown> {
  if (!stores) return {};
  const { encrypted: e, pkcs11: p } = stores;
  const source = (ref: SecretRef | null, name: string) =>
    ref === null ? {} : 'file' in ref ? { [`${name}_file`]: ref.file } : { [`${name}_env`]: ref.env };
  return {
    encrypted: { dir: e.dir, scrypt_log_n: e.scrypt_log_n, ...source(e.passphrase, 'passphrase') },
    pkcs11: {
      module: p.module,
      token_label: p.token_label,
      sessions: p.sessions,
      reconnect_ms: p.reconnect_ms,
      ...source(p.pin, 'pin'),
    },
  };
}
