// Step 1 of the x402 example: a USDC-like token on the embedded chain for the signer's key to pay with.
//
//   AGENT=<the key's pubkey, from `sa-forge-signer key show demo`> node examples/x402-pay/setup.mjs
//
// Creates a mint with 6 decimals, gives the key's token account AGENT_AMOUNT base units (default 1 token), and
// makes the merchant's token account. Prints the addresses as JSON: put the mint and the merchant into the key's
// `tokens:` policy (see README.md here), restart the signer, then run pay.mjs with MINT and MERCHANT.
import { generateKeyPairSigner } from '@solana/kit';
import { createToken } from './chain.mjs';

const RPC_URL = process.env.RPC_URL ?? 'http://127.0.0.1:8899';
const AGENT = process.env.AGENT;
if (!AGENT) throw new Error('set AGENT to the signer key pubkey that pays (sa-forge-signer key show NAME)');

// The merchant only receives: its address is all the example needs.
const merchant = (await generateKeyPairSigner()).address;
const token = await createToken(RPC_URL, {
  agent: AGENT,
  merchant,
  agentAmount: process.env.AGENT_AMOUNT ?? '1000000',
});
console.log(JSON.stringify({ ...token, merchant }));
