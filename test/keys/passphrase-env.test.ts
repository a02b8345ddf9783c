/**
 * A passphrase given by `passphrase_env`, in the built service: once the service has read it, the variable is gone
 * from the service process's environment as the kernel shows it (/proc/PID/environ, what `ps e` prints) and from
 * what the process would hand a child; the service keeps the secret, so a reload that opens the encrypted key again
 * still opens it and a sign after it still signs.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { tokenSha256 } from '../../src/http/bearer-tokens';
import { killOnExit, stopChild } from '../support/children';
import { assertBuilt, BIN, listeningAddress, run, spawnBin, writeYaml } from '../support/cli';
import { makeWorld, worldConfigDocument, type World } from '../support/world';
import { headersFor, rpc, TOKEN } from '../http/support';

const VARIABLE = 'PLAY_KEY_PASSPHRASE';
const PASSPHRASE = 'correct horse battery staple'; // what makeWorld seals an encrypted world's keys with

let w: World;
let service: ChildProcess;
let configFile: string;
let address: string;

function writeConfig(dailyCap: number): void {
  const doc = worldConfigDocument(w, {
    serve: {
      listen: '127.0.0.1:0',
      metrics: null,
      tokens: [{ name: 'agent', sha256: tokenSha256(TOKEN), keys: ['alpha'] }],
    },
  });
  const stores = doc.key_stores as { encrypted: Record<string, unknown> };
  delete stores.encrypted.passphrase_file;
  stores.encrypted.passphrase_env = VARIABLE;
  (doc.keys as Record<string, Record<string, unknown>>).alpha!.daily_lamport_cap = dailyCap;
  writeYaml(configFile, doc);
}

async function tool(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const body = rpc('tools/call', { name, arguments: args });
  const res = await fetch(`http://${address}/mcp`, {
    method: 'POST',
    headers: headersFor(body),
    body: JSON.stringify(body),
  });
  const reply = (await res.json()) as { result: { structuredContent: Record<string, unknown> } };
  return reply.result.structuredContent;
}

beforeAll(async () => {
  assertBuilt(BIN.serve, BIN.signer);
  w = await makeWorld({ store: 'encrypted' });
  configFile = path.join(w.dir, 'config.yaml');
  writeConfig(1_000_000_000);
  service = spawnBin(BIN.serve, ['--config', configFile], { [VARIABLE]: PASSPHRASE });
  killOnExit(service);
  address = await listeningAddress(service);
}, 60_000);

afterAll(async () => {
  await stopChild(service, 'SIGTERM');
  await w.close();
});

test('the passphrase variable is gone from the running service once read, and a sign after a reload still signs', async () => {
  // A tool call waits for the engine, which opened the encrypted key with the passphrase.
  const shown = (await tool('key_show', { key: 'alpha' })) as { keys: { name: string }[] };
  expect(shown.keys.map((k) => k.name)).toEqual(['alpha']);

  const environ = fs.readFileSync(`/proc/${String(service.pid)}/environ`, 'latin1');
  expect(environ).toContain('PATH='); // the other variables are still there
  expect({ name: environ.includes(`${VARIABLE}=`), value: environ.includes(PASSPHRASE) }).toEqual({
    name: false,
    value: false,
  });

  // A new policy opens every key again from the store: the passphrase the service kept opens it.
  writeConfig(900_000_000);
  const reloaded = await run(BIN.signer, ['--config', configFile, 'reload']);
  expect(reloaded.stdout).toMatch(/applied: keys\.alpha\.daily_lamport_cap 1000000000 → 900000000\n/);
  const signed = await tool('sign', { key: 'alpha', payload: w.transfer('alpha', 1_000_000) });
  expect(signed).toMatchObject({ outcome: 'confirmed' });
}, 60_000);
