/**
 * Key stores side by side (docs/keys.md): the same engine load with every key in the `file`, the `encrypted` and
 * the `pkcs11` store (a SoftHSM2 token in a temporary directory). For each: sign/s across 16 keys on the
 * in-process chain, and the engine's CPU per sign with the chain in a child process (RPC client CPU excluded, as in
 * the engine section). An encrypted key signs from memory once opened, so it should match the file store; a pkcs11
 * key signs in the token, which costs a round trip into the module per signature.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { localCluster } from '../src/config/clusters';
import { DEFAULT_TIMINGS, type KeyConfig, type KeyStoreKind } from '../src/config/types';
import { JsonRpcClient } from '../src/rpc/rpc-client';
import { createKeyStores, defaultKeyStores } from '../src/keys/stores';
import { openEngine } from '../src/signer';
import { transferPayload } from '../src/signer/transfer';
import { encodeBase58 } from '../src/util/base58';
import { benchConfig, BLOCK_MS, CpuAccountedChain, oneAtATime, startBenchChain, timed } from './engine';
import type { BenchLine } from './stats';

const KEYS = 16;

const SOFTHSM_MODULE = '/usr/lib/softhsm/libsofthsm2.so';
const STORES: readonly KeyStoreKind[] = ['file', 'encrypted', 'pkcs11'];
const operator = { kind: 'operator' } as const;

/** SoftHSM2 reads SOFTHSM2_CONF when its module initialises: one temporary token directory for this run. */
function softHsmToken(dir: string): { label: string; pin: string } {
  const tokens = path.join(dir, 'softhsm-tokens');
  fs.mkdirSync(tokens, { recursive: true, mode: 0o700 });
  const conf = path.join(dir, 'softhsm2.conf');
  fs.writeFileSync(conf, `directories.tokendir = ${tokens}\nobjectstore.backend = file\nlog.level = ERROR\n`);
  process.env.SOFTHSM2_CONF = conf;
  const label = 'bench';
  const pin = crypto.randomBytes(8).toString('hex');
  execFileSync('softhsm2-util', ['--init-token', '--free', '--label', label, '--pin', pin, '--so-pin', pin], {
    stdio: 'ignore',
  });
  return { label, pin };
}

async function setup(store: KeyStoreKind, rpc: 'in-process' | 'child-process', keyCount: number) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `bench-${store}-`));
  const keyDir = path.join(dir, 'keys');
  const secret = path.join(dir, 'secret');
  const stores = defaultKeyStores(keyDir);
  if (store === 'encrypted') {
    fs.writeFileSync(secret, 'bench passphrase\n', { mode: 0o600 });
    stores.encrypted = { ...stores.encrypted, passphrase: { file: secret }, scrypt_log_n: 10 };
  }
  if (store === 'pkcs11') {
    const token = softHsmToken(dir);
    fs.writeFileSync(secret, token.pin, { mode: 0o600 });
    stores.pkcs11 = { ...stores.pkcs11, module: SOFTHSM_MODULE, token_label: token.label, pin: { file: secret } };
  }
  const maker = createKeyStores({ key_dir: keyDir, key_stores: stores });
  const keys: KeyConfig[] = [];
  for (let i = 0; i < keyCount; i++) {
    const name = `k${String(i).padStart(2, '0')}`;
    keys.push({
      name,
      store,
      class: 'session',
      pubkey: await maker.store(store).create(name),
      profile: null,
      approval: 'auto',
      transfer_to: [encodeBase58(crypto.randomBytes(32))],
      extra_programs: [],
      rate_limit_per_minute: 1_000_000,
      daily_lamport_cap: 1_000_000_000_000,
      allow_unattended: false,
    });
  }
  await maker.close();
  const { url, stop: stopChain } = await startBenchChain(rpc, keys);
  const config = benchConfig(dir, localCluster({ rpc_url: url, game_programs: [], player_profile: null }), keys, {
    key_stores: stores,
    timings: { ...DEFAULT_TIMINGS, poll_interval_ms: 10 },
  });
  const chain = new CpuAccountedChain(new JsonRpcClient(url, { timeoutMs: config.timings.rpc_timeout_ms }));
  const engine = await openEngine(config, { chain });
  return {
    engine,
    keys,
    chain,
    async close() {
      await engine.close();
      await stopChain();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

const payloadFor = (k: KeyConfig, i: number) =>
  transferPayload({ from: k.pubkey, to: k.transfer_to[0] ?? '', lamports: 1_000_000 + i, summary: 'bench' });

export async function runStoresBench(seconds: number): Promise<BenchLine[]> {
  const lines: BenchLine[] = [];
  const rates = new Map<KeyStoreKind, number>();
  for (const store of STORES) {
    const s = await setup(store, 'in-process', KEYS);
    try {
      for (const k of s.keys) await s.engine.sign({ payload: payloadFor(k, 0), principal: operator }); // warm-up
      const signs = await timed(seconds * 1000, KEYS * 2, (w, i) => {
        const key = s.keys[w % KEYS] ?? s.keys[0];
        if (!key) throw new Error('no keys');
        return s.engine.sign({ payload: payloadFor(key, i * 100 + w + 1), principal: operator });
      });
      const notConfirmed = signs.results.filter((r) => r.outcome !== 'confirmed').length;
      const rate = signs.count / signs.seconds;
      rates.set(store, rate);
      lines.push({
        name: `stores: ${store} sign/s, ${KEYS} keys, ${BLOCK_MS} ms blocks`,
        value: rate,
        unit: 'sign/s',
        note: `${notConfirmed} not confirmed`,
      });
    } finally {
      await s.close();
    }

    const c = await setup(store, 'child-process', 1);
    try {
      const run = await oneAtATime(c, Math.max(50, seconds * 20));
      lines.push({ name: `stores: ${store} engine CPU per sign excluding RPC calls`, value: run.own, unit: 'µs CPU' });
    } finally {
      await c.close();
    }
  }
  const file = rates.get('file') ?? 0;
  const pkcs11 = rates.get('pkcs11') ?? 0;
  const ratio = file > 0 ? pkcs11 / file : 0;
  lines.push({
    name: 'stores: pkcs11 (SoftHSM2) sign/s relative to file',
    value: ratio,
    unit: 'x',
    target: '>= 0.8',
    ok: ratio >= 0.8,
  });
  return lines;
}
