// Step 2 of the x402 example: an agent pays for API calls with x402, signing through sa-forge-signer.
//
//   MINT=<mint> MERCHANT=<merchant> node examples/x402-pay/pay.mjs      (README.md here: where both come from)
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
// Exit status: 0 when every step was paid (or, for `drop`, signed), 3 when a step was not (the JSON line and stderr
// say why: a signer refusal such as a cap, or another failure), 2 when an input is missing (stderr says what to set).
//
// Network: @x402/svm refuses the embedded chain's own network id, so the routes are labelled with Solana
// devnet's id while every RPC URL here points at the embedded chain (RPC_URL). Nothing talks to devnet.
import fs from 'node:fs';
import {
  address,
  isAddress,
  createSolanaRpc,
  generateKeyPairSigner,
  getBase58Decoder,
  getTransactionDecoder,
} from '@solana/kit';
import { createServiceSigner } from 'sa-forge-signer/kit';
import { payingClient, pay, signButDrop } from './agent.mjs';
import { fund } from './chain.mjs';
import { startFacilitator, startResourceServer } from './merchant.mjs';

const SIGNER_URL = process.env.SIGNER_URL ?? 'http://127.0.0.1:8790/mcp';
const RPC_URL = process.env.RPC_URL ?? 'http://127.0.0.1:8899';
const KEY = process.env.SIGNER_KEY ?? 'demo';
const PRICES = { '/cheap': process.env.PRICE_CHEAP ?? '30000', '/dear': process.env.PRICE_DEAR ?? '60000' };
const STEPS = (process.env.STEPS ?? 'cheap,cheap,cheap,dear').split(',');

/** Stops with what to set, before anything starts: a missing input is not a library's stack trace. */
function missing(what) {
  console.error(`pay.mjs: ${what} (examples/x402-pay/README.md)`);
  process.exit(2);
}
function addressFrom(name, how) {
  const value = process.env[name];
  if (value === undefined || value === '') missing(`set ${name}: ${how}`);
  if (!isAddress(value)) missing(`${name}=${value} is not a base58 address: ${how}`);
  return address(value);
}
function readToken() {
  if (process.env.SIGNER_TOKEN) return process.env.SIGNER_TOKEN;
  const file = process.env.SIGNER_TOKEN_FILE ?? 'var/local/token';
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch (e) {
    return missing(
      `cannot read the bearer token from ${file} (${e.code ?? e.message}): run \`npm start\` once in this folder, or set SIGNER_TOKEN_FILE (or SIGNER_TOKEN)`,
    );
  }
}
const MINT = addressFrom('MINT', 'the mint `sa-forge-signer localnet mint --key demo` printed');
const MERCHANT = addressFrom('MERCHANT', "the demo key's allowed destination (`npm start` prints it)");
const TOKEN = readToken();
for (const step of STEPS)
  if (!['cheap', 'dear', 'drop'].includes(step)) missing(`STEPS: unknown step ${step}; use cheap, dear or drop`);

/** A start-up step that failed: which one, what it said, and what to set. */
async function step(what, hint, run) {
  try {
    return await run();
  } catch (e) {
    console.error(`pay.mjs: ${what} failed: ${e instanceof Error ? e.message : String(e)}; ${hint}`);
    process.exit(1);
  }
}

const facilitatorKey = await generateKeyPairSigner();
await step(
  `funding the facilitator from the chain at ${RPC_URL}`,
  'is `npm start` running? set RPC_URL to the chain it prints',
  () => fund(createSolanaRpc(RPC_URL), facilitatorKey.address, 1_000_000_000),
);
const facilitator = await startFacilitator({ keyPair: facilitatorKey, rpcUrl: RPC_URL });
const shop = await startResourceServer({
  facilitatorUrl: facilitator.url,
  mint: MINT,
  payTo: MERCHANT,
  prices: PRICES,
});
const signer = await step(
  `reaching the signer at ${SIGNER_URL} for key ${KEY}`,
  'is `npm start` running? set SIGNER_URL to the MCP endpoint it prints, SIGNER_TOKEN_FILE to its token and SIGNER_KEY to the key',
  () => createServiceSigner({ url: SIGNER_URL, token: TOKEN, key: KEY, summary: 'x402 payment for an API call' }),
);
const unpaid = [];
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
      if (dropped.error) unpaid.push({ step, error: dropped.error });
    } else {
      const result = await pay(client, `${shop.url}/${step}`);
      console.log(JSON.stringify({ step, ...result }));
      if (result.status !== 200) unpaid.push({ step, error: result.error ?? `HTTP ${result.status}` });
    }
  }
} finally {
  await signer.close();
  await shop.close();
  await facilitator.close();
}

if (unpaid.length > 0) {
  for (const u of unpaid) console.error(`pay.mjs: step ${u.step} was not paid: ${u.error}`);
  console.error(
    `pay.mjs: ${unpaid.length} of ${STEPS.length} steps not paid (a refusal names the cap or check: \`sa-forge-signer key show ${KEY}\` shows the policy)`,
  );
  process.exitCode = 3;
}
