/**
 * The `sa-forge-signer/kit` signer as agent code uses it: kit's own signing helpers hand their transactions to
 * the service over MCP (the official client, on a loopback port, the real engine and embedded chain), which
 * checks, simulates and signs them: sending itself (TransactionSendingSigner) or returning the signature
 * (TransactionPartialSigner) for the test to send.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  address,
  appendTransactionMessageInstructions,
  createSolanaRpc,
  createTransactionMessage,
  getBase58Decoder,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  partiallySignTransactionMessageWithSigners,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signAndSendTransactionMessageWithSigners,
  createSignableMessage,
  getOffchainMessageEncoder,
  getPublicKeyFromAddress,
  verifySignature as verifyKitSignature,
  type Instruction,
  type SignatureBytes,
} from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { createServiceSigner, SignerServiceError, type ServiceSigner } from '../../src/client/kit';
import { verifySignature } from '../../src/keys/keypair';
import { decodeAddress } from '../../src/util/base58';
import { randomAddress } from '../support/payloads';
import { balanceOf, makeWorld, type World } from '../support/world';
import { makeApp, serveConfig, TOKEN } from '../http/support';
import { waitConfirmed } from '../signer/kit-transactions';

let w: World;
let server: http.Server;
let signer: ServiceSigner;
let quiet: ServiceSigner;
let rpc: ReturnType<typeof createSolanaRpc>;

beforeAll(async () => {
  w = await makeWorld({ keys: { alpha: { sign_messages: true }, quiet: {} } });
  const app = makeApp({ config: serveConfig({}, w.config), engine: w.engine });
  server = http.createServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  rpc = createSolanaRpc(w.localnet.url);
  signer = await createServiceSigner({ url, token: TOKEN, key: 'alpha', summary: 'kit signer test' });
  quiet = await createServiceSigner({ url, token: TOKEN, key: 'quiet' });
});
afterAll(async () => {
  await signer.close();
  await quiet.close();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await w.close();
});

async function transferMessage(to: string, amount: bigint, extra: Instruction[] = []) {
  const { value: latest } = await rpc.getLatestBlockhash().send();
  return pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(signer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(latest, m),
    (m) =>
      appendTransactionMessageInstructions(
        [getTransferSolInstruction({ source: signer, destination: address(to), amount }), ...extra],
        m,
      ),
  );
}

test("the signer's address is the key's pubkey, looked up with key_show", () => {
  expect(signer.address).toBe(w.keys.alpha!.pubkey);
});

test('signAndSendTransactionMessageWithSigners: the service sends it and it is confirmed', async () => {
  const to = w.keys.alpha!.destination;
  const before = await balanceOf(w, to);
  const signature = await signAndSendTransactionMessageWithSigners(await transferMessage(to, 1_000_000n));
  const text = getBase58Decoder().decode(signature);
  const { value } = await rpc.getSignatureStatuses([text as never]).send();
  expect(value[0]?.err).toBeNull();
  expect(await balanceOf(w, to)).toBe(before + 1_000_000);
  expect(w.reports.at(-1)).toMatchObject({ outcome: 'confirmed', signature: text });
});

test('partiallySignTransactionMessageWithSigners: a signature that verifies, and the test sends the transaction', async () => {
  const to = w.keys.alpha!.destination;
  const before = await balanceOf(w, to);
  const tx = await partiallySignTransactionMessageWithSigners(await transferMessage(to, 2_000_000n));
  const ours = tx.signatures[signer.address];
  expect(ours).toBeTruthy();
  const pubkey = decodeAddress(signer.address)!;
  expect(verifySignature(pubkey, new Uint8Array(tx.messageBytes), new Uint8Array(ours!))).toBe(true);
  expect(w.reports.at(-1)).toMatchObject({ outcome: 'signed' });

  const sent = await rpc.sendTransaction(getBase64EncodedWireTransaction(tx), { encoding: 'base64' }).send();
  expect(sent).toBe(getSignatureFromTransaction(tx));
  await waitConfirmed(rpc, sent);
  expect(await balanceOf(w, to)).toBe(before + 2_000_000);
});

test('a refusal throws SignerServiceError naming the failed check', async () => {
  const stranger = randomAddress();
  const error = await signAndSendTransactionMessageWithSigners(await transferMessage(stranger, 1000n)).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SignerServiceError);
  const e = error as SignerServiceError;
  expect(e.message).toMatch(/check system/);
  expect(e.report).toMatchObject({
    outcome: 'refused',
    failed_check: 'system',
    reason: 'transfer_destination_not_allowed',
    figures: { destination: stranger },
  });
});

test('SignerServiceError.code: the refusal reason, a foreign key, or the signer refusing before it calls', async () => {
  const refused = await signAndSendTransactionMessageWithSigners(await transferMessage(randomAddress(), 1000n)).then(
    () => null,
    (e: unknown) => e as SignerServiceError,
  );
  expect(refused?.code).toBe('transfer_destination_not_allowed');
  expect(refused?.report?.reason).toBe('transfer_destination_not_allowed');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  const foreign = await createServiceSigner({ url, token: TOKEN, key: 'not-mine' }).then(
    () => null,
    (e: unknown) => e as SignerServiceError,
  );
  expect(foreign).toBeInstanceOf(SignerServiceError);
  expect(foreign?.code).toBe('key_not_authorized');
  const notText = await signer.signMessages([createSignableMessage(new Uint8Array([0x80, 0xff, 0xfe]))]).then(
    () => null,
    (e: unknown) => e as SignerServiceError,
  );
  expect(notText?.code).toBe('message_not_signable');
});

test("SignerServiceError.code: a service error's code from structuredContent.error, the text unchanged", async () => {
  // A service whose engine cannot open: every tool call is the error `internal`.
  const broken = http.createServer(makeApp({ config: serveConfig({}, w.config) }));
  await new Promise<void>((r) => broken.listen(0, '127.0.0.1', r));
  try {
    const url = `http://127.0.0.1:${(broken.address() as AddressInfo).port}/mcp`;
    const failed = await createServiceSigner({ url, token: TOKEN, key: 'alpha' }).then(
      () => null,
      (e: unknown) => e as SignerServiceError,
    );
    expect(failed).toBeInstanceOf(SignerServiceError);
    expect(failed?.code).toBe('internal');
    expect(failed?.message).toBe(
      'the signer service answered key_show without a report: error: no engine in this test',
    );
  } finally {
    broken.closeAllConnections();
    await new Promise((r) => broken.close(r));
  }
});

describe('MessagePartialSigner', () => {
  const verifies = async (content: Uint8Array, signature: SignatureBytes | undefined) =>
    verifyKitSignature(await getPublicKeyFromAddress(signer.address), signature!, content);

  test('signMessages: a sign-in text and an off-chain message, each signed by the key as given', async () => {
    const text = createSignableMessage(`example.com wants you to sign in with your Solana account:\n${signer.address}`);
    const offchain = createSignableMessage(
      new Uint8Array(
        getOffchainMessageEncoder().encode({
          version: 1,
          content: 'Authorise API key 7',
          requiredSignatories: [{ address: signer.address }],
        }),
      ),
    );
    const [first, second] = await signer.signMessages([text, offchain]);
    expect(await verifies(text.content, first?.[signer.address])).toBe(true);
    expect(await verifies(offchain.content, second?.[signer.address])).toBe(true);
    const formats = w.reports.slice(-2).map((r) => r.signed_message === null);
    expect(formats).toEqual([true, false]); // the text has no envelope, the off-chain message does
  });

  test('a transaction message passed as a message is refused, and so is a key without sign_messages', async () => {
    const tx = await partiallySignTransactionMessageWithSigners(await transferMessage(w.keys.alpha!.destination, 1n));
    const disguised = await signer.signMessages([createSignableMessage(new Uint8Array(tx.messageBytes))]).then(
      () => null,
      (e: unknown) => e,
    );
    // A v0 message starts with 0x80: neither the off-chain signing domain nor UTF-8, so it is refused before sending.
    expect(disguised).toBeInstanceOf(SignerServiceError);
    expect((disguised as SignerServiceError).report).toBeNull();
    const off = await quiet.signMessages([createSignableMessage('Sign in')]).then(
      () => null,
      (e: unknown) => e,
    );
    expect(off).toBeInstanceOf(SignerServiceError);
    expect((off as SignerServiceError).report).toMatchObject({
      outcome: 'refused',
      failed_check: 'authorized',
      reason: 'messages_not_allowed',
    });
  });
});
