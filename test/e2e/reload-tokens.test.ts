/**
 * Bearer tokens change with a reload, in the built service, with no restart: a rotated token stops working and its
 * successor works at once, a token added works, one removed is refused, and a token given other keys may use only
 * those. The reload's answer and audit entry say which token changed, never its hash.
 */
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { newToken, tokenSha256 } from '../../src/http/bearer-tokens';
import { stopChild, killOnExit } from '../support/children';
import { assertBuilt, BIN, run, listeningAddress, spawnBin, writeYaml } from '../support/cli';
import { makeWorld, worldConfigDocument, type World } from '../support/world';
import { headersFor, rpc } from '../http/support';

let w: World;
let service: ChildProcess;
let configFile: string;
let address: string;

const token = (name: string, secret: string, keys: string[]) => ({ name, sha256: tokenSha256(secret), keys });
const agentFirst = newToken();
const agentRotated = newToken();
const ops = newToken();

function writeConfig(tokens: ReturnType<typeof token>[]): void {
  writeYaml(configFile, worldConfigDocument(w, { serve: { listen: '127.0.0.1:0', tokens, metrics: null } }));
}

/** key_show with this bearer token: the HTTP status and the keys it lists. */
async function keysSeenWith(secret: string): Promise<{ status: number; keys: string[] }> {
  const body = rpc('tools/call', { name: 'key_show', arguments: {} });
  const res = await fetch(`http://${address}/mcp`, {
    method: 'POST',
    headers: { ...headersFor(body), Authorization: `Bearer ${secret}` },
    body: JSON.stringify(body),
  });
  if (res.status !== 200) return { status: res.status, keys: [] };
  const answer = (await res.json()) as { result: { structuredContent: { keys: { name: string }[] } } };
  return { status: 200, keys: answer.result.structuredContent.keys.map((k) => k.name) };
}

beforeAll(async () => {
  assertBuilt(BIN.serve, BIN.signer);
  w = await makeWorld({ keys: { alpha: {}, beta: {} } });
  configFile = path.join(w.dir, 'tokens.yaml');
  writeConfig([token('agent', agentFirst, ['alpha'])]);
  service = spawnBin(BIN.serve, ['--config', configFile]);
  killOnExit(service);
  address = await listeningAddress(service, 60_000);
}, 60_000);

afterAll(async () => {
  await stopChild(service, 'SIGTERM');
  await w.close();
});

test('a rotated token, an added one, a removed one and other keys all take effect at the reload', async () => {
  expect(await keysSeenWith(agentFirst)).toEqual({ status: 200, keys: ['alpha'] });

  writeConfig([token('agent', agentRotated, ['alpha', 'beta']), token('ops', ops, ['beta'])]);
  const rotated = await run(BIN.signer, ['--config', configFile, 'reload']);
  expect(rotated.code).toBe(0);
  expect(rotated.stdout).toMatch(
    /applied: \+token ops; serve\.tokens\.agent\.keys added 1: beta; serve\.tokens\.agent rotated\n/,
  );
  expect(rotated.stdout).not.toContain(tokenSha256(agentRotated));
  expect(await keysSeenWith(agentFirst)).toEqual({ status: 401, keys: [] });
  expect(await keysSeenWith(agentRotated)).toEqual({ status: 200, keys: ['alpha', 'beta'] });
  expect(await keysSeenWith(ops)).toEqual({ status: 200, keys: ['beta'] });

  writeConfig([token('agent', agentRotated, ['alpha', 'beta'])]);
  const removed = await run(BIN.signer, ['--config', configFile, 'reload']);
  expect(removed.stdout).toMatch(/applied: -token ops\n/);
  expect(await keysSeenWith(ops)).toEqual({ status: 401, keys: [] });
  expect(await keysSeenWith(agentRotated)).toEqual({ status: 200, keys: ['alpha', 'beta'] });

  const reloads = (await w.ledger.tail(20)).filter((e) => e.command === 'reload');
  expect(reloads.map((e) => e.summary)).toEqual([
    '+token ops; serve.tokens.agent.keys added 1: beta; serve.tokens.agent rotated',
    '-token ops',
  ]);
  expect(JSON.stringify(reloads)).not.toContain(tokenSha256(agentRotated));
});
