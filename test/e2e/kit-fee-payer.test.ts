/**
 * The `sa-forge-signer/kit` signer in the x402 shape, with no token involved: another account (a facilitator)
 * is the fee payer, kit's partial signing hands the transaction to the service over MCP, which fills only the
 * key's slot; the facilitator signs last and sends, and the service's watcher records the landed transaction
 * under the key's signature with the facilitator's id. Real engine, real MCP endpoint, real embedded chain.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  address,
  appendTransactionMessageInstructions,
  compileTransaction,
  createSolanaRpc,
  createTransactionMessage,
  getBase58Decoder,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  lamports,
  partiallySignTransaction,
  partiallySignTransactionMessageWithSigners,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  type KeyPairSigner,
} from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { createServiceSigner, type ServiceSigner } from '../../src/client/kit';
import type { AuditEntry } from '../../src/ledger/types';
import { balanceOf, makeWorld, type World } from '../support/world';
import { makeApp, serveConfig, TOKEN } from '../http/support';
import { fundedSigner, waitConfirmed } from '../signer/kit-transactions';

const SOL = 1_000_000_000;

let w: World;
let server: http.Server;
let signer: ServiceSigner;
let facilitator: KeyPairSigner;
let rpc: ReturnType<typeof createSolanaRpc>;

beforeAll(async () => {
  w = await makeWorld({ keys: { alpha: {} } });
  const app = makeApp({ config: serveConfig({}, w.config), engine: w.engine });
  server = http.createServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  rpc = createSolanaRpc(w.localnet.url);
  signer = await createServiceSigner({ url, token: TOKEN, key: 'alpha', summary: 'paid by a facilitator' });
  facilitator = await fundedSigner((a, l) => w.localnet.airdrop(a, l));
  w.localnet.airdrop(w.keys.alpha!.destination, SOL); // rent-exempt already, so a small transfer lands
});
afterAll(async () => {
  await signer.close();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await w.close();
});

/** A v0 transfer from the key through the kit signer, the facilitator named fee payer by address only: it signs
 *  after the agent's signer, as in x402. */
async function paidByFacilitator(destination: string, amount: bigint) {
  const { value: latest } = await rpc.getLatestBlockhash().send();
  return pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayer(facilitator.address, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(latest, m),
    (m) =>
      appendTransactionMessageInstructions(
        [getTransferSolInstruction({ source: signer, destination: address(destination), amount: lamports(amount) })],
        m,
      ),
  );
}

async function finalFor(signature: string): Promise<AuditEntry> {
  const until = Date.now() + 15_000;
  while (Date.now() < until) {
    for await (const e of w.ledger.entries()) if (e.command === 'sign' && e.signature === signature) return e;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`no final entry for ${signature}`);
}

test('kit partial signing fills the key slot through the service; the facilitator pays, sends, and the ledger names its id', async () => {
  const key = w.keys.alpha!;
  const keyBefore = await balanceOf(w, key.pubkey);
  const facilitatorBefore = await balanceOf(w, facilitator.address);
  const message = await paidByFacilitator(key.destination, 7000n);
  const byAgent = await partiallySignTransactionMessageWithSigners(message);
  expect(byAgent.signatures[facilitator.address]).toBeNull();
  const own = byAgent.signatures[signer.address];
  expect(own).toBeTruthy();
  const keySignature = getBase58Decoder().decode(own!);

  const full = await partiallySignTransaction([facilitator.keyPair], byAgent);
  const id = getSignatureFromTransaction(full);
  await rpc.sendTransaction(getBase64EncodedWireTransaction(full), { encoding: 'base64' }).send();
  await waitConfirmed(rpc, id);

  const final = await finalFor(keySignature);
  expect(final).toMatchObject({ outcome: 'confirmed', balance_change: -7000 });
  expect(final.detail).toContain(`landed as ${id}, fee paid by ${facilitator.address}`);
  expect(await balanceOf(w, key.pubkey)).toBe(keyBefore - 7000);
  expect(await balanceOf(w, facilitator.address)).toBeLessThan(facilitatorBefore);
});

test('the service refuses to send a transaction someone else pays for: the sending signer path is refused', async () => {
  const key = w.keys.alpha!;
  const message = await paidByFacilitator(key.destination, 1000n);
  const unsigned = compileTransaction(message);
  // What a TransactionSendingSigner would do with it: ask the service to send.
  await expect(signer.signAndSendTransactions([unsigned])).rejects.toThrow(
    /refused, check fee_payer.*use mode "sign_only" and let the fee payer sign and send it/,
  );
});
