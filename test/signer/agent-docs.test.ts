/**
 * The agent docs' kit snippets (signer://docs/payload) are real code: each one is run with node, with the
 * example addresses swapped for a world's key and destination, and the payload it builds must pass `check`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { INSTRUCTIONS, RESOURCES } from '../../src/mcp/resources';
import { PAYLOAD } from '../../src/mcp/docs';
import { ROOT, run } from '../support/cli';
import { makeWorld, type World } from '../support/world';

const EXAMPLE_KEY = '4Nd1mYwJ3d8q4t1nUQ8e3YqKkX2n1Fbq9xHk2wz3h5Qv';
const EXAMPLE_DESTINATION = 'GjJyeC1r2RgkuoCWMyPYkCWSGSGLcz266EaAkLA27AhL';

let w: World;
let dir: string;
beforeAll(async () => {
  w = await makeWorld({ keys: { alpha: { sign_messages: true } } });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-docs-'));
  // The snippets import @solana/kit and @solana-program/system as agent code does: from node_modules.
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
});
afterAll(async () => {
  fs.rmSync(dir, { recursive: true, force: true });
  await w.close();
});

const snippets = [...PAYLOAD.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');

test('the payload resource has one kit snippet per version, and one for messages', () => {
  expect(snippets).toHaveLength(3);
  expect(snippets[0]).toContain('version: 1');
  expect(snippets[1]).toContain('version: 2');
  expect(snippets[2]).toContain("version: 'message'");
});

/** The snippet's code with the example addresses swapped for the world's, run with node: the payload it prints. */
async function payloadOf(i: number): Promise<Record<string, unknown>> {
  const key = w.keys.alpha!;
  const code = snippets[i]!.replaceAll(EXAMPLE_KEY, key.pubkey)
    .replaceAll(EXAMPLE_DESTINATION, key.destination)
    .replaceAll('http://127.0.0.1:8899', w.localnet.url);
  const file = path.join(dir, `snippet-${i}.mjs`);
  fs.writeFileSync(file, `${code}\nconsole.log(JSON.stringify(payload));\n`);
  const r = await run(file, [], { cwd: dir });
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

test.each([0, 1])('snippet %i builds a payload that check passes', async (i) => {
  const payload = await payloadOf(i);
  const report = await w.engine.check({ payload, principal: w.operator });
  expect(report).toMatchObject({ outcome: 'ok', failed_check: null });
  expect(report.balance_change).toBeLessThanOrEqual(-1_000_000);
});

test('the message snippet builds an off-chain message payload that sign signs', async () => {
  const payload = await payloadOf(2);
  expect(await w.engine.check({ payload, principal: w.operator })).toMatchObject({ outcome: 'ok', failed_check: null });
  const report = await w.engine.sign({ payload, principal: w.operator });
  expect(report).toMatchObject({ outcome: 'signed', key: 'alpha' });
  expect(report.signed_message).not.toBeNull();
});

test('no resource names a tool this project does not ship', () => {
  for (const text of [INSTRUCTIONS, ...RESOURCES.map((r) => r.text)]) expect(text).not.toMatch(/forge-mcp|build_\*/);
});
