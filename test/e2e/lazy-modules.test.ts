/**
 * The built service loads what its config uses and nothing else: with file keys, SQLite, no operator console and no
 * webhooks, the packages of the other subsystems stay on disk after the engine has opened and answered a tool call
 * (docs/performance.md, "Memory"). A small preload, written by the test, lists the packages Node has loaded from
 * node_modules; packages bundled into the service (the console's and the webhooks' libraries) are not seen by it,
 * only those the bundle leaves outside (scripts/bundle-serve.mjs).
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { newToken, tokenSha256 } from '../../src/http/bearer-tokens';
import { stopChild, killOnExit } from '../support/children';
import { assertBuilt, BIN, listeningAddress, spawnBin, waitForOutput, writeYaml } from '../support/cli';
import { makeWorld, worldConfigDocument, type World } from '../support/world';
import { headersFor, rpc } from '../http/support';

/** On SIGUSR2, writes the names of the packages in require.cache to LOADED_FILE, then says so on stderr. */
const PRELOAD = `process.on('SIGUSR2', () => {
  const names = new Set();
  for (const file of Object.keys(require.cache)) {
    const m = /node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(file);
    if (m) names.add(m[1]);
  }
  require('node:fs').writeFileSync(process.env.LOADED_FILE, JSON.stringify([...names].sort()));
  process.stderr.write('loaded packages written\\n');
});
`;

let w: World;
let service: ChildProcess;
let loadedFile: string;
let address: string;
const secret = newToken();

beforeAll(async () => {
  assertBuilt(BIN.serve);
  w = await makeWorld({ keys: { alpha: {} } });
  const configFile = path.join(w.dir, 'lazy.yaml');
  writeYaml(
    configFile,
    worldConfigDocument(w, {
      serve: {
        listen: '127.0.0.1:0',
        tokens: [{ name: 'agent', sha256: tokenSha256(secret), keys: ['alpha'] }],
        metrics: null,
      },
    }),
  );
  const preload = path.join(w.dir, 'loaded-packages.js');
  fs.writeFileSync(preload, PRELOAD);
  loadedFile = path.join(w.dir, 'loaded.json');
  service = spawnBin(BIN.serve, ['--config', configFile], {
    NODE_OPTIONS: `--require ${preload}`,
    LOADED_FILE: loadedFile,
  });
  killOnExit(service);
  address = await listeningAddress(service, 60_000);
}, 60_000);

afterAll(async () => {
  await stopChild(service, 'SIGTERM');
  await w.close();
});

test('a service of file keys on SQLite, without console or webhooks, loads none of the other subsystems', async () => {
  // key_show answers once the engine (keys, ledger, chain client, policy) has opened.
  const body = rpc('tools/call', { name: 'key_show', arguments: { key: 'alpha' } });
  const res = await fetch(`http://${address}/mcp`, {
    method: 'POST',
    headers: { ...headersFor(body), Authorization: `Bearer ${secret}` },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);

  const written = waitForOutput(service, /loaded packages written/);
  service.kill('SIGUSR2');
  await written;
  const loaded = JSON.parse(fs.readFileSync(loadedFile, 'utf8')) as string[];
  // What the engine of this config uses is there: the SQLite addon and kit's transaction codecs.
  expect(loaded).toEqual(expect.arrayContaining(['better-sqlite3', '@solana/transactions']));
  for (const unused of [
    '@solana/kit', // the whole of kit (RPC, subscriptions, WebSocket), where the engine needs its codecs
    '@solana-program/token', // read with the first token account, mint or token instruction
    'ws',
    'pkcs11js',
    'age-encryption',
    'pg',
    'litesvm',
    'prom-client', // metrics: null
    '@biscuit-auth/biscuit-wasm', // credentials: none configured
  ])
    expect(loaded).not.toContain(unused);
});
