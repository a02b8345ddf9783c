// Step 2 of the x402 example: an agent pays for API calls with x402, signing through sa-forge-signer.
//
//   SIGNER_TOKEN_FILE=var/local/token MINT=<mint> MERCHANT=<merchant> node examples/x402-pay/pay.mjs
//
// Starts a local facilitator (its own key, funded from the embedded chain's faucet, the fee payer of every
// payment) and a resource server with two priced routes, all on 127.0.0.1; then the agent GETs the routes in
// STEPS order with @x402/fetch. Its kit signer is the signer service's (`createServiceSigner`): the service
// checks each payment against the key's token policy, simulates it, fills only the key's signature slot and
// records it; the facilitator signs last, pays the fee and sends. Prints one JSON line per step.
//
// STEPS: comma-separated `cheap` / `dear` (GET the route, paying) or `drop` (have the payment signed for the
// cheap route, then never send it: it expires, and the signer's audit log records `signed_expired`).
//
// Network: @x402/svm refuses the embedded chain's own network id, so the routes are labelled with Solana
// devnet's id while every RPC URL here points at the embedded chain (RPC_URL). Nothing talks to devnet.
import fs from 'node:fs';
import { address, createSolanaRpc, generateKeyPairSigner, getBase58Decoder, getTransactionDecoder } from '@solana/kit';
import { createServiceSigner } from 'sa-forge-signer/kit';
import { payingClient, pay, signButDrop } from './agent.mjs';
import { fund } from './chain.mjs';
import { startFacilitator, startResourceServer } from './merchant.mjs';

const SIGNER_URL = process.env.SIGNER_URL ?? 'http://127.0.0.1:8790/mcp';
const RPC_URL = process.env.RPC_URL ?? 'http://127.0.0.1:8899';
const KEY = process.env.SIGNER_KEY ?? 'demo';
const TOKEN =
  process.env.SIGNER_TOKEN ?? fs.readFileSync(process.env.SIGNER_TOKEN_FILE ?? 'var/local/token', 'utf8').trim();
const MINT = address(process.env.MINT ?? '');
const MERCHANT = address(process.env.MERCHANT ?? '');
const PRICES = { '/cheap': process.env.PRICE_CHEAP ?? '30000', '/dear': process.env.PRICE_DEAR ?? '60000' };
const STEPS = (process.env.STEPS ?? 'cheap,cheap,cheap,dear').split(',');

const facilitatorKey = await generateKeyPairSigner();
await fund(createSolanaRpc(RPC_URL), facilitatorKey.address, 1_000_000_000);
const facilitator = await startFacilitator({ keyPair: facilitatorKey, rpcUrl: RPC_URL });
const shop = await startResourceServer({
  facilitatorUrl: facilitator.url,
  mint: MINT,
  payTo: MERCHANT,
  prices: PRICES,
});
const signer = await createServiceSigner({
  url: SIGNER_URL,
  token: TOKEN,
  key: KEY,
  summary: 'x402 payment for an API call',
});
try {
  console.log(JSON.stringify({ facilitator: facilitatorKey.address, key: signer.address, shop: shop.url }));
  const client = payingClient({ signer, rpcUrl: RPC_URL, mint: MINT });
  for (const step of STEPS) {
    if (step === 'drop') {
      const dropped = await signButDrop(client, `${shop.url}/cheap`).catch((e) => ({ error: String(e) }));
      const tx = dropped.transaction_base64
        ? getTransactionDecoder().decode(Buffer.from(dropped.transaction_base64, 'base64'))
        : null;
      const own = tx?.signatures[signer.address];
      console.log(
        JSON.stringify({
          step,
          key_signature: own ? getBase58Decoder().decode(own) : null,
          error: dropped.error ?? null,
        }),
      );
    } else if (step === 'cheap' || step === 'dear') {
      console.log(JSON.stringify({ step, ...(await pay(client, `${shop.url}/${step}`)) }));
    } else throw new Error(`unknown step ${step}: use cheap, dear or drop`);
  }
} finally {
  await signer.close();
  await shop.close();
  await facilitator.close();
}
