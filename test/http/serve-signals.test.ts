/**
 * Stopping the built service while a sign waits for an operator's approval: the first SIGINT drains (the process
 * stays for the sign), a second exits at once, and what the sign had recorded stays in the ledger, which verifies.
 */
import path from 'node:path';
import { newToken, tokenSha256 } from '../../src/http/bearer-tokens';
import { assertBuilt, BIN, run, spawnBin, waitForOutput, writeYaml } from '../support/cli';
import { makeWorld, worldConfigDocument, type World } from '../support/world';
import { headersFor, rpc } from './support';

let w: World;
beforeAll(async () => {
  assertBuilt(BIN.serve, BIN.signer);
  w = await makeWorld({ keys: { alpha: { approval: 'confirm' } }, timings: { approval_timeout_ms: 60_000 } });
});
afterAll(() => w.close());

test('a second SIGINT exits at once while a sign waits for approval; the ledger keeps its record', async () => {
  const token = newToken();
  const configFile = path.join(w.dir, 'serve-signals.yaml');
  writeYaml(
    configFile,
    worldConfigDocument(w, {
      serve: {
        listen: '127.0.0.1:0',
        tokens: [{ name: 'agent', sha256: tokenSha256(token), keys: ['alpha'] }],
        metrics: null,
        drain_ms: 60_000,
      },
    }),
  );
  const child = spawnBin(BIN.serve, ['--config', configFile]);
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  try {
    const out = await waitForOutput(child, /serving on 127\.0\.0\.1:\d+/);
    const port = /serving on 127\.0\.0\.1:(\d+)/.exec(out)![1]!;
    const body = rpc('tools/call', {
      name: 'sign',
      arguments: { key: 'alpha', payload: w.transfer('alpha', 1_000_000) },
    });
    const signing = fetch(`http://127.0.0.1:${port}/mcp`, {
      method: 'POST',
      headers: { ...headersFor(body), Authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    }).catch((e: unknown) => e);
    // The sign is waiting once its approval request is in the ledger.
    const deadline = Date.now() + 20_000;
    while ((await w.ledger.listApprovals({ status: 'pending' })).length === 0) {
      if (Date.now() > deadline) throw new Error('the sign never asked for approval');
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill('SIGINT');
    await waitForOutput(child, /draining/);
    const stillRunning = await Promise.race([exited.then(() => false), new Promise((r) => setTimeout(r, 500, true))]);
    expect(stillRunning).toBe(true); // the first signal waits for the sign
    const second = Date.now();
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(Date.now() - second).toBeLessThan(2000);
    await signing; // the client sees its connection end
    expect((await w.ledger.listApprovals()).length).toBeGreaterThan(0);
    const verify = await run(BIN.signer, ['--config', configFile, 'audit', 'verify']);
    expect([verify.code, verify.stdout.trim()]).toEqual([0, expect.stringMatching(/^ok: \d+ entries$/)]);
  } finally {
    child.kill('SIGKILL');
  }
}, 60_000);
