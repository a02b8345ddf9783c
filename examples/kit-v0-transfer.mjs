// A v0 transfer through an address lookup table, built with @solana/kit and sent by sa-forge-signer.
//
// The agent never holds the key: `createServiceSigner` returns a kit signer whose signatures come from the
// service, after its policy checks, simulation and caps. The destination is loaded from a lookup table, so
// it is not among the message's own accounts; the signer resolves the table from the chain and checks the
// destination all the same.
//
// Run it against `npm start` (the embedded chain on 127.0.0.1:8899, the service on 127.0.0.1:8790):
//   SIGNER_TOKEN_FILE=var/local/token DESTINATION=<an allowed destination of key "demo"> \
//     node examples/kit-v0-transfer.mjs
// It prints the transaction's signature once the signer has confirmed it. Exit status: 0 confirmed, 2 an input is
// missing (stderr says what to set), 1 the transfer was not made (stderr says why: the signer's refusal, an
// unreachable service or chain).
import fs from 'node:fs';
import {
  isAddress,
  AccountRole,
  address,
  appendTransactionMessageInstructions,
  compressTransactionMessageUsingAddressLookupTables,
  createSolanaRpc,
  createTransactionMessage,
  fetchAddressesForLookupTables,
  generateKeyPairSigner,
  getAddressEncoder,
  getBase58Decoder,
  getBase64EncodedWireTransaction,
  getProgramDerivedAddress,
  getU32Encoder,
  getU64Encoder,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signAndSendTransactionMessageWithSigners,
  signTransactionMessageWithSigners,
} from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { createServiceSigner } from 'sa-forge-signer/kit';

const SIGNER_URL = process.env.SIGNER_URL ?? 'http://127.0.0.1:8790/mcp';
const RPC_URL = process.env.RPC_URL ?? 'http://127.0.0.1:8899';
const KEY = process.env.SIGNER_KEY ?? 'demo';
/** Stops with what to set, before anything starts. */
function missing(what) {
  console.error(`kit-v0-transfer.mjs: ${what}`);
  process.exit(2);
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
const TOKEN = readToken();
const destinationText = process.env.DESTINATION ?? '';
if (!isAddress(destinationText))
  missing(
    destinationText === ''
      ? `set DESTINATION to an allowed destination of key "${KEY}" (\`npm start\` prints it; \`sa-forge-signer key show ${KEY}\`)`
      : `DESTINATION=${destinationText} is not a base58 address`,
  );
const DESTINATION = address(destinationText);
if (!/^\d+$/.test(process.env.LAMPORTS ?? '1000000')) missing('LAMPORTS takes a whole number of lamports');
const AMOUNT = lamports(BigInt(process.env.LAMPORTS ?? '1000000'));

const rpc = createSolanaRpc(RPC_URL);
const ALT_PROGRAM = address('AddressLookupTab1e1111111111111111111111111');
const SYSTEM_PROGRAM = address('11111111111111111111111111111111');

// --- A lookup table holding the destination, made by the agent's own throwaway payer. ----------------------
// (The lookup-table program's published kit client lags kit's major version, so its two instructions are
// encoded here with kit's codecs: CreateLookupTable is 0 + recent slot + bump, ExtendLookupTable is 2 + a
// u64-length list of addresses.)
async function createLookupTable(addresses) {
  const payer = await generateKeyPairSigner();
  await rpc.requestAirdrop(payer.address, lamports(1_000_000_000n)).send();
  const recentSlot = await rpc.getSlot({ commitment: 'confirmed' }).send();
  const [table, bump] = await getProgramDerivedAddress({
    programAddress: ALT_PROGRAM,
    seeds: [getAddressEncoder().encode(payer.address), getU64Encoder().encode(recentSlot)],
  });
  const accounts = [
    { address: table, role: AccountRole.WRITABLE },
    { address: payer.address, role: AccountRole.READONLY_SIGNER, signer: payer },
    { address: payer.address, role: AccountRole.WRITABLE_SIGNER, signer: payer },
    { address: SYSTEM_PROGRAM, role: AccountRole.READONLY },
  ];
  const create = {
    programAddress: ALT_PROGRAM,
    accounts,
    data: new Uint8Array([...getU32Encoder().encode(0), ...getU64Encoder().encode(recentSlot), bump]),
  };
  const extend = {
    programAddress: ALT_PROGRAM,
    accounts,
    data: new Uint8Array([
      ...getU32Encoder().encode(2),
      ...getU64Encoder().encode(BigInt(addresses.length)),
      ...addresses.flatMap((a) => [...getAddressEncoder().encode(a)]),
    ]),
  };
  const { value: latest } = await rpc.getLatestBlockhash().send();
  const signed = await signTransactionMessageWithSigners(
    pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(payer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(latest, m),
      (m) => appendTransactionMessageInstructions([create, extend], m),
    ),
  );
  const signature = await rpc.sendTransaction(getBase64EncodedWireTransaction(signed), { encoding: 'base64' }).send();
  await waitForConfirmation(signature);
  // Addresses added to a table become usable in the slot after the one that added them.
  const added = await rpc.getSlot().send();
  while ((await rpc.getSlot().send()) <= added) await new Promise((r) => setTimeout(r, 50));
  return table;
}

async function waitForConfirmation(signature) {
  for (let i = 0; i < 100; i++) {
    const { value } = await rpc.getSignatureStatuses([signature]).send();
    const status = value[0];
    if (status?.err) throw new Error(`transaction ${signature} failed: ${JSON.stringify(status.err)}`);
    if (status?.confirmationStatus === 'confirmed' || status?.confirmationStatus === 'finalized') return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`transaction ${signature} was not confirmed`);
}

// --- The agent's transfer: fee payer and source are the service's key; kit hands it to the signer. ----------
/** The transfer was not made: say why and what to look at, exit 1 (never a bare stack trace). */
function failed(what, e) {
  const parts = [];
  for (let cur = e; cur instanceof Error && parts.length < 4; cur = cur.cause) parts.push(cur.message);
  console.error(`kit-v0-transfer.mjs: ${what}: ${parts.join(': ') || String(e)}`);
  process.exit(1);
}

const signer = await createServiceSigner({
  url: SIGNER_URL,
  token: TOKEN,
  key: KEY,
  summary: 'example: v0 transfer',
}).catch((e) =>
  failed(
    `cannot reach the signer at ${SIGNER_URL} for key ${KEY} (is \`npm start\` running? set SIGNER_URL, SIGNER_TOKEN_FILE, SIGNER_KEY)`,
    e,
  ),
);
try {
  const table = await createLookupTable([DESTINATION]);
  const tables = await fetchAddressesForLookupTables([table], rpc);
  const { value: latest } = await rpc.getLatestBlockhash().send();
  const message = compressTransactionMessageUsingAddressLookupTables(
    pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(signer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(latest, m),
      (m) =>
        appendTransactionMessageInstructions(
          [getTransferSolInstruction({ source: signer, destination: DESTINATION, amount: AMOUNT })],
          m,
        ),
    ),
    tables,
  );
  const signature = await signAndSendTransactionMessageWithSigners(message).catch((e) =>
    failed('the signer did not send the transfer', e),
  );
  console.log(JSON.stringify({ signature: getBase58Decoder().decode(signature), lookup_table: table }));
} catch (e) {
  failed(`the transfer could not be built on the chain at ${RPC_URL} (is \`npm start\` running? set RPC_URL)`, e);
} finally {
  await signer.close();
}
