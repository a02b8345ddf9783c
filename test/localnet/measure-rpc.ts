/**
 * Measurement, not a test: RPC calls per second through JsonRpcClient against the localnet, to tell whether
 * the chain side can carry the engine's ≥100 signs/s (~8 RPC calls each).
 *
 *   npx tsc -p . --outDir /tmp/measure-build; NODE_PATH=$PWD/node_modules node /tmp/measure-build/test/localnet/measure-rpc.js [url]
 *
 * Without a URL the localnet runs in this process (client and chain share one core); with one, it measures
 * against a localnet in another process (`sa-forge-signer localnet`), funding its payer with requestAirdrop.
 */
import { JsonRpcTransport } from '../../src/rpc/json-rpc-transport';
import { JsonRpcClient } from '../../src/rpc/rpc-client';
import { startLocalnet } from '../../src/localnet/server';
import { newSigner, randomAddress, signedTransfer, unsignedTransfer } from './legacy-tx';

const DURATION_MS = 3000;

async function rate(name: string, concurrency: number, op: () => Promise<unknown>): Promise<void> {
  const end = Date.now() + DURATION_MS;
  let done = 0;
  const worker = async () => {
    while (Date.now() < end) {
      await op();
      done++;
    }
  };
  const start = process.hrtime.bigint();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  console.log(`${name.padEnd(44)} concurrency ${String(concurrency).padStart(2)}: ${Math.round(done / seconds)}/s`);
}

async function main(): Promise<void> {
  const payer = newSigner();
  const external = process.argv[2];
  const net = external
    ? null
    : await startLocalnet({ blockIntervalMs: 400, fund: [{ address: payer.pubkey, lamports: 1e15 }] });
  const url = external ?? net!.url;
  if (external) await new JsonRpcTransport(url, 5000).call('requestAirdrop', [payer.pubkey, 1e15]);
  const client = new JsonRpcClient(url, { timeoutMs: 15000 });
  const to = randomAddress();

  for (const c of [1, 8]) {
    await rate('getLatestBlockhash', c, () => client.getLatestBlockhash());
    await rate('blockhash + sign + simulate (sigVerify)', c, async () => {
      const { blockhash } = await client.getLatestBlockhash();
      const tx = signedTransfer(payer, to, 1_000_000, blockhash);
      return client.simulateTransaction(tx.base64, {
        sigVerify: true,
        replaceRecentBlockhash: false,
        accounts: [payer.pubkey],
      });
    });
    const { blockhash } = await client.getLatestBlockhash();
    const unsigned = unsignedTransfer(payer.pubkey, to, 1_000_000, blockhash);
    await rate('simulateTransaction only (unsigned, replace)', c, () =>
      client.simulateTransaction(unsigned.base64, {
        sigVerify: false,
        replaceRecentBlockhash: true,
        accounts: [payer.pubkey],
      }),
    );
    // The engine's calls for one sign, minus the polling waits: what the chain side can carry per second.
    let amount = 1_000_000 + c * 1_000_000_000;
    await rate('sign sequence (8 calls, landing a transfer)', c, async () => {
      const latest = await client.getLatestBlockhash();
      await client.getBalance(payer.pubkey);
      const tx = signedTransfer(payer, to, amount++, latest.blockhash);
      await client.simulateTransaction(tx.base64, {
        sigVerify: true,
        replaceRecentBlockhash: false,
        accounts: [payer.pubkey],
      });
      await client.getFeeForMessage(tx.messageBase64);
      await client.sendTransaction(tx.base64);
      await client.getSignatureStatuses([tx.signature], { searchTransactionHistory: false });
      await client.getBlockHeight('finalized');
      await client.getTransaction(tx.signature);
    });
  }
  client.close();
  if (net) {
    console.log('localnet stats', JSON.stringify({ ...net.stats(), calls: undefined }));
    await net.close();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
