/**
 * The one audit entry a message sign writes (command `sign-message`): the outcome, the signature when it signed,
 * and in `detail` what was signed: its kind, size and sha256, and its text. The text is the agent's and stored as
 * it is (at most MAX_MESSAGE_BYTES, so bounded); whoever shows it escapes it (`audit tail` does). A signed entry is
 * written before the signature is handed back, so no signature leaves without its record.
 */
import type { KeyConfig } from '../../config/types';
import type { AuditEntryInput } from '../../ledger/types';
import { nowSeconds } from '../../util/time';
import type { Report } from '../report';
import type { MessageView } from './content';
import type { MessagePayload } from './payload';

export function messageEntry(input: {
  key: KeyConfig;
  payload: MessagePayload;
  intent: string | null;
  view: MessageView | null;
  report: Report;
  /** Who approved (flow/approval.ts approvalNote) when operators had to: the entry names them. */
  approval?: string | null;
  /** The credential that asked (types.ts credentialNote), if one did. */
  credential?: string | null;
}): AuditEntryInput {
  const { key, payload, view, report } = input;
  const what = view?.describe ?? (payload.format === 'text' ? 'sign-in text (UTF-8)' : 'off-chain message (unread)');
  const text = view?.text ?? (payload.format === 'text' ? new TextDecoder().decode(payload.bytes) : null);
  const parts = [
    report.outcome === 'signed' ? null : report.detail,
    `${what}, ${payload.bytes.length} bytes, sha256 ${payload.sha256}`,
    input.approval ?? null,
    input.credential ?? null,
    // Last: the agent's own words, whatever they contain.
    text === null ? null : `text: ${text}`,
  ];
  return {
    ts: nowSeconds(),
    key: key.name,
    command: 'sign-message',
    payload_hash: payload.hash,
    programs: [],
    summary: payload.summary,
    intent: input.intent,
    outcome: report.outcome,
    detail: parts.filter((p): p is string => p !== null).join('; '),
    signature: report.signature,
    slot: null,
    balance_change: null,
  };
}
