/**
 * `sa-forge-signer localnet`: argument parsing, the announced URL, funding, and a clean stop on SIGTERM.
 * Runs in-process; the signal is delivered to the command's own listener with process.emit.
 */
import { JsonRpcClient } from '../../src/rpc/rpc-client';
import { parseLocalnetArgs, runLocalnet } from '../../src/localnet/main';
import { DEFAULT_LOCALNET_GENESIS_HASH } from '../../src/localnet/server';
import { SignerError } from '../../src/util/errors';
import { newSigner } from './legacy-tx';

test('parses listen, fund, block interval, blocks until confirmed and controls', () => {
  const a = newSigner().pubkey;
  expect(
    parseLocalnetArgs([
      '--listen',
      '127.0.0.1:0',
      '--fund',
      `${a}=5000000`,
      '--block-ms',
      '0',
      '--confirm-blocks',
      '2',
      '--controls',
    ]),
  ).toEqual({
    host: '127.0.0.1',
    port: 0,
    fund: [{ address: a, lamports: 5_000_000 }],
    blockIntervalMs: 0,
    confirmAfterBlocks: 2,
    controls: true,
  });
  expect(parseLocalnetArgs([])).toEqual({ host: '127.0.0.1', port: 8899, fund: [] });
  expect(parseLocalnetArgs(['--listen', '[::1]:9000'])).toMatchObject({ host: '::1', port: 9000 });
});

test.each([
  [['--listen', 'nohost'], '--listen takes HOST:PORT, not nohost'],
  [['--fund', 'abc=1'], '--fund takes ADDRESS=LAMPORTS, not abc=1'],
  [['--block-ms', '-3'], '--block-ms takes a whole number of milliseconds, not -3'],
  [['--block-ms'], '--block-ms needs a value'],
  [['--confirm-blocks', '0'], '--confirm-blocks takes a whole number of blocks ≥ 1, not 0'],
  [['--verbose'], 'unknown option --verbose'],
])('refuses %j with a usage message', (argv, problem) => {
  let thrown: unknown = null;
  try {
    parseLocalnetArgs(argv);
  } catch (e) {
    thrown = e;
  }
  expect(thrown).toBeInstanceOf(SignerError);
  expect((thrown as SignerError).code).toBe('request_invalid');
  expect((thrown as SignerError).message).toContain(`localnet: ${problem}. Usage:`);
});

test('announces its URL, serves the funded accounts, and stops cleanly on SIGTERM', async () => {
  const key = newSigner();
  const out: string[] = [];
  const err: string[] = [];
  const stdout = jest.spyOn(process.stdout, 'write').mockImplementation((s) => (out.push(String(s)), true));
  const stderr = jest.spyOn(process.stderr, 'write').mockImplementation((s) => (err.push(String(s)), true));
  try {
    const running = runLocalnet(['--listen', '127.0.0.1:0', '--fund', `${key.pubkey}=7000000`, '--block-ms', '0']);
    while (out.length === 0) await new Promise((r) => setTimeout(r, 5));
    const url = out[0]!.trim();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(err).toEqual([`localnet listening on ${url} genesis ${DEFAULT_LOCALNET_GENESIS_HASH}\n`]);

    const client = new JsonRpcClient(url, { timeoutMs: 2000 });
    expect(await client.getBalance(key.pubkey)).toBe(7_000_000);
    client.close();

    process.emit('SIGTERM');
    await running;
    await expect(fetch(url, { method: 'POST', body: '{}' })).rejects.toThrow();
  } finally {
    stdout.mockRestore();
    stderr.mockRestore();
  }
});
