/**
 * The latency bench's baseline: a bare client at the same distance as the engine. @solana/kit's own RPC and
 * subscriptions clients, through the same latency proxy (HTTP and WebSocket), send a System transfer signed with
 * kit from the same funded key and learn it is confirmed from the `signatureNotification` alone: no simulation
 * before the send, no status read after the notice. Its send-to-confirmed is the least any client at this distance
 * waits: the send's way to the chain, the chain's own confirmation and the notice's way back.
 *
 * What is timed, and what is not, so the comparison with the engine's `sign` is fair:
 * - timed: from the moment the client starts its send (the subscription is asked for in the same tick, as the
 *   engine does, so its acknowledgement is not waited for) to the moment the notice reaches it;
 * - not timed: a fresh blockhash, fetched before each send (the engine keeps one between signs and refreshes it
 *   in its simulation's batch, so neither pays a round trip for it), building and signing the transaction;
 * - the WebSocket connection stays open between sends (kit closes a connection once nothing is subscribed on it,
 *   so one subscription to a signature that never lands is held for the client's life), as the engine's does,
 *   and HTTP requests reuse one kept-alive connection: neither pays the proxy's connection round trip per send.
 *
 * A send's wait for its block depends on where in the block it reaches the chain (400 to 800 ms here for
 * `confirmed` after 2 blocks), and a loop of sends started each time just after the last confirmation reaches the
 * chain at about the same point every time. `send` can therefore be paced: given a moment the chain confirmed
 * something (a block boundary) and the chain time of one of the engine's signs, it starts the send so that it
 * reaches the chain that long before a later boundary, and the two waits for the chain are the same.
 */
import fs from 'node:fs';
import crypto from 'node:crypto';
import {
  address,
  appendTransactionMessageInstruction,
  createKeyPairSignerFromBytes,
  createSolanaRpc,
  createSolanaRpcSubscriptions,
  createTransactionMessage,
  getBase58Decoder,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  signature as toSignature,
  type Base64EncodedWireTransaction,
  type Signature,
} from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';

export interface BareSend {
  /** From the moment the client started its send to the moment the notice said `confirmed`. */
  totalMs: number;
  /** The chain's own time, taken as for the engine: from the send reaching the chain to the chain saying confirmed. */
  chainMs: number;
  /** When the chain first said confirmed (`performance.now()`): a block boundary, for pacing the next send. */
  confirmedAt: number;
}

/** Where the next send should reach the chain: `chainMs` before a block boundary, boundaries `blockMs` apart from `boundaryAt`. */
export interface Pace {
  boundaryAt: number;
  chainMs: number;
}

export interface BareClient {
  send(lamports: bigint, pace?: Pace): Promise<BareSend>;
  close(): void;
}

export async function openBareClient(opts: {
  /** The chain's URL as the client sees it (the proxy's); the WebSocket is on the same port. */
  url: string;
  /** The funded key's Solana CLI key file (64 bytes). */
  keyFile: string;
  to: string;
  oneWayMs: number;
  blockMs: number;
  /** When the chain, asked directly, first reports `signature` confirmed (`performance.now()`). */
  confirmedOnChain: (signature: string) => Promise<number>;
}): Promise<BareClient> {
  const keyBytes = new Uint8Array(JSON.parse(fs.readFileSync(opts.keyFile, 'utf8')) as number[]);
  const payer = await createKeyPairSignerFromBytes(keyBytes);
  keyBytes.fill(0);
  const rpc = createSolanaRpc(opts.url);
  const subscriptions = createSolanaRpcSubscriptions(opts.url.replace(/^http/, 'ws'));
  const open = new AbortController();
  // Held for the client's life so kit keeps the connection open between sends (see above).
  const standing = toSignature(getBase58Decoder().decode(crypto.randomBytes(64)));
  await subscriptions
    .signatureNotifications(standing, { commitment: 'confirmed' })
    .subscribe({ abortSignal: open.signal });

  const build = async (amount: bigint): Promise<{ wire: Base64EncodedWireTransaction; signature: Signature }> => {
    const { value: lifetime } = await rpc.getLatestBlockhash({ commitment: 'confirmed' }).send();
    const message = pipe(
      createTransactionMessage({ version: 'legacy' }),
      (m) => setTransactionMessageFeePayerSigner(payer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
      (m) =>
        appendTransactionMessageInstruction(
          getTransferSolInstruction({ source: payer, destination: address(opts.to), amount: lamports(amount) }),
          m,
        ),
    );
    const signed = await signTransactionMessageWithSigners(message);
    return { wire: getBase64EncodedWireTransaction(signed), signature: getSignatureFromTransaction(signed) };
  };

  return {
    async send(amount, pace) {
      const { wire, signature } = await build(amount);
      if (pace) await sleepUntil(startFor(pace, opts.oneWayMs, opts.blockMs));
      const following = new AbortController();
      try {
        const t0 = performance.now();
        const subscribed = subscriptions
          .signatureNotifications(signature, { commitment: 'confirmed' })
          .subscribe({ abortSignal: following.signal });
        const sent = rpc.sendTransaction(wire, { encoding: 'base64', skipPreflight: true, maxRetries: 0n }).send();
        const watched = opts.confirmedOnChain(signature);
        const notices = (await subscribed)[Symbol.asyncIterator]();
        const first = await notices.next();
        const totalMs = performance.now() - t0;
        if (first.done) throw new Error('bare client: the notifications ended without one');
        if (first.value.value.err !== null) throw new Error(`bare client: the transfer failed on chain`);
        if ((await sent) !== signature) throw new Error('bare client: the send answered another signature');
        const confirmedAt = await watched;
        return { totalMs, chainMs: confirmedAt - (t0 + opts.oneWayMs), confirmedAt };
      } finally {
        following.abort();
      }
    },
    close: () => open.abort(),
  };
}

/** The first moment from now at which a send reaches the chain `pace.chainMs` before a block boundary. */
function startFor(pace: Pace, oneWayMs: number, blockMs: number): number {
  const now = performance.now();
  let at = pace.boundaryAt - pace.chainMs - oneWayMs;
  while (at < now) at += blockMs;
  return at;
}

function sleepUntil(at: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, at - performance.now())));
}
