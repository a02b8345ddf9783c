/**
 * The body a hook receives, by its format: `standard` is the event itself as JSON; `slack` is what a Slack incoming
 * webhook (and the chat tools that copy it) reads, `{text}`, a few lines an operator reads on a phone. In Slack text
 * `&`, `<` and `>` are markup (links, @channel), so every value is escaped, and someone else's words are quoted and
 * labelled as unverified.
 */
import type { NotifyFormat } from '../config/types';
import type { NotificationEvent, UnverifiedText } from './events';

export function renderBody(format: NotifyFormat, event: NotificationEvent): string {
  if (format === 'standard') return JSON.stringify(event);
  return JSON.stringify({ text: slackText(event) });
}

const slackEscape = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function value(v: unknown): string {
  if (v === null || v === undefined) return '-';
  return slackEscape(typeof v === 'string' ? v : JSON.stringify(v));
}

function words(label: string, u: unknown): string | null {
  const t = u as UnverifiedText | undefined;
  if (!t || typeof t.text !== 'string' || t.text === '') return null;
  return `${label} (written by ${value(t.written_by)}, not verified): "${slackEscape(t.text).replace(/`/g, "'")}"`;
}

function lamports(label: string, v: unknown): string | null {
  return typeof v === 'number' ? `${label}: ${v} lamports` : null;
}

function tokens(v: unknown): string | null {
  if (!Array.isArray(v) || v.length === 0) return null;
  return `tokens: ${v.map((t: { mint: string; change: string }) => `${value(t.change)} of ${value(t.mint)}`).join(', ')}`;
}

function slackText(e: NotificationEvent): string {
  const d = e.data;
  const key = value(d.key);
  const lines: (string | null)[] = [];
  switch (e.type) {
    case 'approval.requested':
      lines.push(
        `*Approval requested* for key \`${key}\`: \`sa-forge-signer approvals approve ${value(d.approval_id)}\` (or reject) before ${value(d.expires_at)}`,
        typeof d.required === 'number' && d.required > 1 ? `needs ${d.required} approvers` : null,
        lamports('balance change', d.balance_change_lamports),
        lamports('fee', d.fee_lamports),
        tokens(d.tokens),
        words('summary', d.summary),
      );
      break;
    case 'approval.decided':
      lines.push(
        `*Approval ${value(d.approval_id)} ${value(d.status)}* for key \`${key}\` (by ${value(d.decided_by)})`,
        lamports('balance change', d.balance_change_lamports),
        tokens(d.tokens),
      );
      break;
    case 'key.halted':
      lines.push(`*Key \`${key}\` halted* by ${value(d.halted_by)}`, words('reason', d.reason));
      break;
    case 'key.resumed':
      lines.push(`*Key \`${key}\` resumed* by ${value(d.resumed_by)}`);
      break;
    case 'sign.refused_by_cap':
      lines.push(
        `*Sign refused by a cap* on key \`${key}\`: ${value(d.detail)}`,
        lamports('balance change', d.balance_change_lamports),
        tokens(d.tokens),
        words('summary', d.summary),
      );
      break;
    case 'treasury.mismatch':
      lines.push(
        `*Treasury mismatch* on key \`${key}\`: the allowance of ${value(d.account)} is ${value(d.chain_allowance)}, the signer expected ${value(d.expected_allowance)}; the key is halted`,
      );
      break;
    case 'treasury.refill_due':
      lines.push(
        `*Treasury refill due* for key \`${key}\`: ${value(d.account)} has ${value(d.chain_allowance)} of ${value(d.mint)} left, below ${value(d.refill_below)}; \`sa-forge-signer treasury plan ${key}\` plans ${value(d.planned_allowance)}`,
      );
      break;
  }
  lines.push(`_${value(e.timestamp)}_`);
  return lines.filter((l): l is string => l !== null).join('\n');
}
