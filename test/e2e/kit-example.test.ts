/**
 * examples/kit-v0-transfer.mjs, run as an agent author would run it: a real `sa-forge-signer-serve` process on
 * the embedded chain, the example importing `sa-forge-signer/kit` through the package's exports, building a v0
 * transfer whose destination is only in a lookup table, and the signer sending it.
 */
import path from 'node:path';
import { createSolanaRpc, type Signature } from '@solana/kit';
import { ROOT, run } from '../support/cli';
import { LiveService } from '../relay/live-service';
import { balanceOf } from './kit-balance';

const EXAMPLE = path.join(ROOT, 'examples/kit-v0-transfer.mjs');
const AMOUNT = 1_234_567;

let service: LiveService;
beforeAll(async () => {
  service = await LiveService.start({ keys: { demo: {} } });
});
afterAll(async () => {
  await service.close();
});

test('the kit example sends a v0 transfer through a lookup table and it is confirmed on the embedded chain', async () => {
  const destination = service.keys.demo!.destination;
  const rpc = createSolanaRpc(service.localnet.url);
  const before = await balanceOf(rpc, destination);
  const r = await run(EXAMPLE, [], {
    env: {
      SIGNER_URL: service.url,
      SIGNER_TOKEN_FILE: service.tokenFile,
      RPC_URL: service.localnet.url,
      DESTINATION: destination,
      LAMPORTS: String(AMOUNT),
    },
  });
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  const printed = JSON.parse(r.stdout.trim()) as { signature: string; lookup_table: string };
  expect(printed.signature).toMatch(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/);

  const { value } = await rpc.getSignatureStatuses([printed.signature as Signature]).send();
  expect(value[0]).toMatchObject({ err: null });
  expect(['confirmed', 'finalized']).toContain(value[0]?.confirmationStatus);
  expect(await balanceOf(rpc, destination)).toBe(before + AMOUNT);

  // The transaction that landed loaded the destination from the table the example created.
  const landed = await rpc
    .getTransaction(printed.signature as Signature, {
      encoding: 'json',
      maxSupportedTransactionVersion: 0,
      commitment: 'confirmed',
    })
    .send();
  expect(landed?.meta?.loadedAddresses).toEqual({ writable: [destination], readonly: [] });
});

test('the kit example says what to set and exits 2 when an input is missing', async () => {
  const r = await run(EXAMPLE, [], {
    env: { SIGNER_URL: service.url, SIGNER_TOKEN_FILE: service.tokenFile, RPC_URL: service.localnet.url },
  });
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(/^kit-v0-transfer\.mjs: set DESTINATION to an allowed destination of key "demo"/);
  expect(r.stdout).toBe('');
});

test('the kit example exits 1 with the signer’s reason when the transfer is refused', async () => {
  const r = await run(EXAMPLE, [], {
    env: {
      SIGNER_URL: service.url,
      SIGNER_TOKEN_FILE: service.tokenFile,
      RPC_URL: service.localnet.url,
      // Not among the key's transfer_to: the signer refuses it.
      DESTINATION: '11111111111111111111111111111112',
    },
  });
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/^kit-v0-transfer\.mjs: the signer did not send the transfer: .*destination/i);
  expect(r.stdout).toBe('');
});
