/**
 * A @solana/kit signer whose key never leaves the signer service. Agent code hands it to kit as it would a
 * keypair signer: each transaction goes to the service's `sign` tool over MCP (the official client, speaking
 * 2026-07-28), where the operator's policy, simulation, caps and approval decide. As a
 * `TransactionPartialSigner` it asks for `mode: "sign_only"` and returns the key's signature (the caller, a
 * facilitator or the agent's own RPC, sends the transaction); as a `TransactionSendingSigner` the service
 * sends and confirms it and the signature comes back once it has landed.
 *
 * As a `MessagePartialSigner` it signs kit's `SignableMessage`s with a `message` payload (docs/payloads.md): content
 * that starts with the off-chain message signing domain (0xff "solana offchain", e.g. kit's
 * getOffchainMessageEncoder().encode(...)) is sent as format "offchain"; any other content must be UTF-8 and is sent
 * as format "text" (a sign-in message), signed byte for byte as given. Content that is neither is refused here,
 * before anything is sent. The key must have `sign_messages` on in the service's config.
 *
 * A refusal is thrown as a `SignerServiceError` carrying the service's report, so the agent sees which check
 * refused and why (`failed_check`, `reason`, `detail`); every `SignerServiceError` has a `code` to branch on: the
 * report's `reason`, the service's error code (a call that failed before any report), or one of this signer's own.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  address,
  getBase58Encoder,
  getBase64EncodedWireTransaction,
  getTransactionDecoder,
  getPublicKeyFromAddress,
  verifySignature,
  type Address,
  type MessagePartialSigner,
  type SignableMessage,
  type SignatureBytes,
  type SignatureDictionary,
  type Transaction,
  type TransactionPartialSigner,
  type TransactionSendingSigner,
} from '@solana/kit';
import { ERRORS, type ErrorCode } from '../util/errors/codes';
import { REASONS, type Reason } from '../signer/refusals';
import { isRecord } from '../util/is-record';

/** The protocol revision the service speaks; the official client must be pinned to it. */
export const SIGNER_PROTOCOL_VERSION = '2026-07-28';

/** A sign can wait for an operator's approval (120 s by default) and then for confirmation. */
const DEFAULT_REQUEST_TIMEOUT_MS = 180_000;

export interface ServiceSignerOptions {
  /** The service's MCP endpoint, e.g. `http://127.0.0.1:8790/mcp`. */
  url: string | URL;
  /** The agent's bearer token (never logged by the service). */
  token: string;
  /** The key's name in the service's config; its address is looked up with `key_show`. */
  key: string;
  /** What the operator and the audit log see for each transaction. */
  summary?: string | ((transaction: Transaction) => string);
  /** What the operator and the audit log see for each message (beside the message itself). */
  messageSummary?: string | ((message: SignableMessage) => string);
  /** How long one sign may take, approval included. */
  requestTimeoutMs?: number;
  fetch?: typeof fetch;
}

/** Why the service did not sign, as its report's `reason` says (docs/reports.md, "Reasons"). */
export type ServiceReason = Reason;

/**
 * What went wrong, for a program to branch on: a report's reason, the service's error code (docs/reports.md,
 * "Errors"), or this signer's own: `not_signed` (an outcome other than the one asked for, without a reason),
 * `unexpected_answer` (the service answered in a shape this signer does not know), `message_not_signable` (content
 * neither off-chain nor UTF-8, refused before anything was sent), `signature_mismatch` (what came back does not
 * sign what was given).
 */
export type ServiceErrorCode =
  ServiceReason | ErrorCode | 'not_signed' | 'unexpected_answer' | 'message_not_signable' | 'signature_mismatch';

/** The report fields a caller can act on; the service's reports carry more (see docs/reports.md). */
export interface ServiceReport {
  outcome: string;
  key: string | null;
  signature: string | null;
  signed_transaction?: string | null;
  detail: string | null;
  failed_check: string | null;
  /** Why it was not signed, a stable name to act on (docs/reports.md, "Reasons"); null when nothing refused. */
  reason: ServiceReason | null;
  [field: string]: unknown;
}

export class SignerServiceError extends Error {
  override readonly name = 'SignerServiceError';
  constructor(
    message: string,
    /** The service's report, when it answered with one. */
    readonly report: ServiceReport | null,
    readonly code: ServiceErrorCode = report?.reason ?? 'not_signed',
  ) {
    super(message);
  }
}

const isReason = (v: unknown): v is ServiceReason => typeof v === 'string' && Object.hasOwn(REASONS, v);
const isErrorCode = (v: unknown): v is ErrorCode => typeof v === 'string' && Object.hasOwn(ERRORS, v);

/** The service's error code in a tool error's `structuredContent.error`, when it sent one this signer knows. */
function serviceErrorCode(structured: unknown): ErrorCode | null {
  if (!isRecord(structured) || !isRecord(structured.error)) return null;
  return isErrorCode(structured.error.code) ? structured.error.code : null;
}

export type ServiceSigner<TAddress extends string = string> = TransactionPartialSigner<TAddress> &
  TransactionSendingSigner<TAddress> &
  MessagePartialSigner<TAddress> & {
    /** The key's name in the service's config. */
    readonly key: string;
    /** Ends the MCP client's connection; the signer cannot be used after it. */
    close(): Promise<void>;
  };

/** Connects to the service, looks up the key's address and returns a signer for it. */
export async function createServiceSigner(options: ServiceSignerOptions): Promise<ServiceSigner> {
  const client = new Client(
    { name: 'sa-forge-signer-kit', version: '1' },
    { versionNegotiation: { mode: { pin: SIGNER_PROTOCOL_VERSION } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(options.url), {
      ...(options.fetch ? { fetch: options.fetch } : {}),
      requestInit: { headers: { Authorization: `Bearer ${options.token}` } },
    }),
  );
  const timeout = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const call = async (name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> => {
    const result = await client.callTool({ name, arguments: args }, { timeout, maxTotalTimeout: timeout });
    const structured = result.structuredContent;
    const failed = serviceErrorCode(structured);
    // The one tool error the service answers in text alone is a key the token may not use (key_show, halt).
    if (!isRecord(structured) || failed !== null) {
      const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join(' ');
      throw new SignerServiceError(
        `the signer service answered ${name} without a report: ${text}`,
        null,
        failed ?? (result.isError ? 'key_not_authorized' : 'unexpected_answer'),
      );
    }
    return structured;
  };

  const shown = await call('key_show', { key: options.key });
  const keyAddress = keyAddressOf(shown, options.key);

  const sign = async (transaction: Transaction, mode: 'send' | 'sign_only'): Promise<ServiceReport> => {
    const summary =
      typeof options.summary === 'function' ? options.summary(transaction) : (options.summary ?? 'kit transaction');
    const payload = { version: 2, transaction: getBase64EncodedWireTransaction(transaction), summary, warnings: [] };
    const report = asReport(await call('sign', { key: options.key, payload, mode }));
    const wanted = mode === 'sign_only' ? 'signed' : 'confirmed';
    if (report.outcome !== wanted) {
      throw new SignerServiceError(
        `the signer did not sign (${report.outcome}${report.failed_check ? `, check ${report.failed_check}` : ''}): ${report.detail ?? 'no detail'}`,
        report,
      );
    }
    return report;
  };

  const signMessage = async (message: SignableMessage): Promise<SignatureBytes> => {
    const summary =
      typeof options.messageSummary === 'function'
        ? options.messageSummary(message)
        : (options.messageSummary ?? 'kit message');
    const payload = {
      version: 'message',
      ...messageFields(message.content),
      signer: keyAddress,
      summary,
      warnings: [],
    };
    const report = asReport(await call('sign', { key: options.key, payload }));
    if (report.outcome !== 'signed' || report.signature === null) {
      throw new SignerServiceError(
        `the signer did not sign the message (${report.outcome}${report.failed_check ? `, check ${report.failed_check}` : ''}): ${report.detail ?? 'no detail'}`,
        report,
      );
    }
    const signature = getBase58Encoder().encode(report.signature) as SignatureBytes;
    // The signature must be over exactly these bytes by this key, or it is worthless to the caller.
    if (!(await verifySignature(await getPublicKeyFromAddress(keyAddress), signature, message.content))) {
      throw new SignerServiceError(
        'the signer returned a signature that does not verify over the message',
        report,
        'signature_mismatch',
      );
    }
    return signature;
  };

  return Object.freeze({
    address: keyAddress,
    key: options.key,
    async signTransactions(transactions: readonly Transaction[]): Promise<readonly SignatureDictionary[]> {
      const out: SignatureDictionary[] = [];
      // One at a time: the service signs a key's transactions in order, and caps count each before the next.
      for (const transaction of transactions) {
        const report = await sign(transaction, 'sign_only');
        out.push({ [keyAddress]: ourSignature(report, transaction, keyAddress) });
      }
      return out;
    },
    async signAndSendTransactions(transactions: readonly Transaction[]): Promise<readonly SignatureBytes[]> {
      const out: SignatureBytes[] = [];
      for (const transaction of transactions) {
        const report = await sign(transaction, 'send');
        if (report.signature === null) {
          throw new SignerServiceError('the signer confirmed without a signature', report, 'unexpected_answer');
        }
        out.push(getBase58Encoder().encode(report.signature) as SignatureBytes);
      }
      return out;
    },
    async signMessages(messages: readonly SignableMessage[]): Promise<readonly SignatureDictionary[]> {
      const out: SignatureDictionary[] = [];
      // One at a time, like transactions: each counts against the key's rate limit before the next.
      for (const message of messages) out.push({ [keyAddress]: await signMessage(message) });
      return out;
    },
    close: () => client.close(),
  });
}

/** The off-chain message signing domain: 0xff then "solana offchain". */
const OFFCHAIN_SIGNING_DOMAIN = Uint8Array.from([0xff, ...new TextEncoder().encode('solana offchain')]);

/** How a SignableMessage's content travels: off-chain format as base64, anything else as its UTF-8 text. */
function messageFields(content: Uint8Array): { format: 'offchain' | 'text'; message: string } {
  const head = content.subarray(0, OFFCHAIN_SIGNING_DOMAIN.length);
  if (Buffer.from(head).equals(Buffer.from(OFFCHAIN_SIGNING_DOMAIN))) {
    return { format: 'offchain', message: Buffer.from(content).toString('base64') };
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(content);
  } catch {
    throw new SignerServiceError(
      'the signer signs off-chain messages (0xff "solana offchain" first) and UTF-8 text; this message is neither',
      null,
      'message_not_signable',
    );
  }
  return { format: 'text', message: text };
}

function keyAddressOf(shown: Record<string, unknown>, key: string): Address {
  const keys = shown.keys;
  const view = Array.isArray(keys) ? (keys as unknown[]).find((k) => isRecord(k) && k.name === key) : undefined;
  if (!isRecord(view) || typeof view.pubkey !== 'string') {
    throw new SignerServiceError(`the signer service has no key "${key}" for this token`, null, 'key_not_authorized');
  }
  return address(view.pubkey);
}

function asReport(structured: Record<string, unknown>): ServiceReport {
  if (typeof structured.outcome !== 'string') {
    throw new SignerServiceError('the signer service answered sign without an outcome', null, 'unexpected_answer');
  }
  const text = (field: string): string | null => {
    const v = structured[field];
    return typeof v === 'string' ? v : null;
  };
  return {
    ...structured,
    outcome: structured.outcome,
    key: text('key'),
    signature: text('signature'),
    signed_transaction: text('signed_transaction'),
    detail: text('detail'),
    failed_check: text('failed_check'),
    reason: isReason(structured.reason) ? structured.reason : null,
  };
}

/**
 * The key's signature, read from the signed transaction the service returned. It must sign the very message
 * kit built: a signature over any other message (a replaced blockhash, say) would be useless to the caller.
 */
function ourSignature(report: ServiceReport, transaction: Transaction, keyAddress: Address): SignatureBytes {
  if (!report.signed_transaction) {
    throw new SignerServiceError('the signer returned no signed transaction', report, 'unexpected_answer');
  }
  const signed = getTransactionDecoder().decode(Buffer.from(report.signed_transaction, 'base64'));
  if (!Buffer.from(signed.messageBytes).equals(Buffer.from(transaction.messageBytes))) {
    throw new SignerServiceError(
      'the signer signed a different message than the one it was given',
      report,
      'signature_mismatch',
    );
  }
  const signature = signed.signatures[keyAddress];
  if (!signature) {
    throw new SignerServiceError(
      `the signed transaction has no signature of ${keyAddress}`,
      report,
      'signature_mismatch',
    );
  }
  return signature;
}
