/**
 * The CLI's `key show` and the MCP key_show of the built service agree on whether a key's store can sign with it:
 * a key whose file is missing is `key_unavailable` in both (the CLI's store line says it cannot open the key, never
 * `ok`, and names why; key_show gives agents the state without the file's path), and both say `ok` once the file is
 * back, without a restart.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { tokenSha256 } from '../../src/http/bearer-tokens';
import { keyFilePath } from '../../src/keys/keyfile';
import { killOnExit, stopChild } from '../support/children';
import { assertBuilt, BIN, listeningAddress, run, spawnBin, writeYaml } from '../support/cli';
import { makeWorld, worldConfigDocument, type World } from '../support/world';
import { headersFor, rpc, TOKEN } from '../http/support';

let w: World;
let service: ChildProcess;
let configFile: string;
let address: string;
let betaFile: string;
let betaAway: string;

/** key_show over MCP, as an agent calls it: each key's store_status, and the whole answer's text. */
async function keyShow(): Promise<{ states: Record<string, unknown>; text: string }> {
  const body = rpc('tools/call', { name: 'key_show', arguments: {} });
  const res = await fetch(`http://${address}/mcp`, {
    method: 'POST',
    headers: headersFor(body),
    body: JSON.stringify(body),
  });
  const text = await res.text();
  const reply = JSON.parse(text) as {
    result: { structuredContent: { keys: { name: string; store_status: unknown }[] } };
  };
  const states = Object.fromEntries(reply.result.structuredContent.keys.map((k) => [k.name, k.store_status]));
  return { states, text };
}

const cliShow = (name: string, ...more: string[]) =>
  run(BIN.signer, ['--config', configFile, 'key', 'show', name, ...more]);

beforeAll(async () => {
  assertBuilt(BIN.serve, BIN.signer);
  w = await makeWorld({ keys: { alpha: {}, beta: {} } });
  configFile = path.join(w.dir, 'config.yaml');
  writeYaml(
    configFile,
    worldConfigDocument(w, {
      serve: {
        listen: '127.0.0.1:0',
        metrics: null,
        tokens: [{ name: 'agent', sha256: tokenSha256(TOKEN), keys: ['alpha', 'beta'] }],
      },
    }),
  );
  betaFile = keyFilePath(w.config.key_dir, 'beta');
  betaAway = path.join(w.dir, 'beta.json.away');
  fs.renameSync(betaFile, betaAway);
  service = spawnBin(BIN.serve, ['--config', configFile]);
  killOnExit(service);
  address = await listeningAddress(service);
}, 60_000);

afterAll(async () => {
  await stopChild(service, 'SIGTERM');
  await w.close();
});

test('a key whose file is missing: key show and key_show both say its store cannot open it; both ok once it is back', async () => {
  const broken = await keyShow();
  expect(broken.states).toEqual({ alpha: 'ok', beta: 'key_unavailable' });
  expect(broken.text).not.toContain(w.config.key_dir);

  const text = await cliShow('beta');
  expect(text.code).toBe(0);
  expect(text.stdout).toContain(
    `\nstore: file (cannot open this key)\nkey: unavailable: no key file for "beta" at ${betaFile}\n`,
  );
  expect(JSON.parse((await cliShow('beta', '--json')).stdout)).toMatchObject({
    store_status: 'key_unavailable',
    store_health: 'cannot open this key',
  });

  fs.renameSync(betaAway, betaFile);
  expect((await keyShow()).states).toEqual({ alpha: 'ok', beta: 'ok' });
  expect(JSON.parse((await cliShow('beta', '--json')).stdout)).toMatchObject({
    store_status: 'ok',
    store_health: 'ok',
    key_file: 'ok',
  });
}, 60_000);
