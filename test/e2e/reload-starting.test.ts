/**
 * A reload asked while the service is still opening its engine waits for the engine and is applied, rather than
 * refused with "still starting" (an operator or a script that reloads right after a start). The built service runs
 * behind a proxy in front of the embedded chain that passes no `getGenesisHash` on until the test lets it: the
 * engine asks the chain for its genesis before it opens, so the test holds the opening for as long as it needs.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { REQUEST_FILE, requestReload } from '../../src/cli/reload-files';
import { newToken, tokenSha256 } from '../../src/http/bearer-tokens';
import { FaultProxy } from '../abuse/support/fault-proxy';
import { until } from '../support/async';
import { killOnExit, stopChild } from '../support/children';
import { assertBuilt, BIN, spawnBin, waitForOutput, writeYaml } from '../support/cli';
import { makeWorld, worldConfigDocument, type World } from '../support/world';

let w: World;
let proxy: FaultProxy;
let service: ChildProcess | null = null;
/** Lets the held genesis look-up through (also when the test failed before it did). */
let letGenesisThrough: () => void = () => undefined;

beforeAll(async () => {
  assertBuilt(BIN.serve);
  proxy = await FaultProxy.start();
  w = await makeWorld({ keys: { alpha: {} }, rpcUrl: (url) => (proxy.setTarget(url), proxy.url()) });
});

afterAll(async () => {
  letGenesisThrough();
  if (service) await stopChild(service, 'SIGTERM');
  await proxy.close();
  await w.close();
});

test('a reload asked before the engine has opened is applied once it has', async () => {
  const held = new Promise<void>((resolve) => (letGenesisThrough = resolve));
  let genesisAsked = 0;
  proxy.beforeForward = async (calls) => {
    if (!calls.some((c) => c.method === 'getGenesisHash')) return;
    genesisAsked++;
    await held;
  };

  const configFile = path.join(w.dir, 'starting.yaml');
  const token = (name: string) => ({ name, sha256: tokenSha256(newToken()), keys: ['alpha'] });
  const [agent, ops] = [token('agent'), token('ops')];
  const write = (tokens: ReturnType<typeof token>[]) =>
    writeYaml(configFile, worldConfigDocument(w, { serve: { listen: '127.0.0.1:0', tokens, metrics: null } }));
  write([agent]);
  service = spawnBin(BIN.serve, ['--config', configFile]);
  killOnExit(service);
  await waitForOutput(service, /serving on 127\.0\.0\.1:\d+/);
  await until(() => genesisAsked > 0, "the service's engine to ask the chain for its genesis");

  // The engine cannot open yet: a reload now reaches a service that has no engine.
  write([agent, ops]);
  const answer = requestReload(w.config.state_dir, service.pid!, 60_000);
  const requestFile = path.join(w.config.state_dir, REQUEST_FILE);
  await until(() => !fs.existsSync(requestFile), 'the service to take the reload request');
  letGenesisThrough();

  const result = await answer;
  expect(result.status).toBe('applied');
  expect(result.message).toMatch(/ applied: \+token ops$/);
  expect(result.new_hash).not.toBe(result.old_hash);
});
