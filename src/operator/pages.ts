/**
 * The console's pages, rendered on the server. Every value goes through the html template (escaped); text an agent
 * wrote (summaries, messages, halt reasons, audit summaries) also through `untrusted`, and sits below the signer's
 * own figures in a box that says whose words they are.
 */
import type { ApprovalRecord, AuditEntry, NotCounted, TokenFigure } from '../ledger/types';
import { uiAmount } from '../util/token-amounts';
import type { Refusal } from '../signer/refusals';
import type { KeyView } from '../signer/types';
import { MAX_MESSAGE_BYTES } from '../signer/wire/sizes';
import type { ConsoleData } from './console-data';
import { Html, html, untrusted } from './html';
import type { SignedInOperator } from './locals';
import { formatUsd } from '../util/usd-amounts';
import { treasurySection } from './treasury-section';

const LAMPORTS_PER_SOL = 1_000_000_000n;

interface Layout {
  title: string;
  page: string;
  csrf: string;
  body: Html;
  operator?: SignedInOperator;
  /** Approvals waiting: counted in the tab's title, so a console in a background tab shows someone is needed. */
  waiting?: number;
}

function layout(opts: Layout): string {
  const who = opts.operator
    ? html`<div>
        ${opts.operator.name} <span class="muted">(${opts.operator.role})</span>
        <button id="logout" type="button">Log out</button>
      </div>`
    : html``;
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="csrf-token" content="${opts.csrf}" />
        <title>${opts.waiting ? `(${String(opts.waiting)}) ` : ''}${opts.title} · sa-forge-signer</title>
        <link rel="stylesheet" href="/assets/console.css" />
        <script type="module" src="/assets/console.js"></script>
      </head>
      <body data-page="${opts.page}">
        <header>
          <h1>sa-forge-signer · ${opts.title}</h1>
          ${who}
        </header>
        <p id="status" role="status"></p>
        ${opts.body}
      </body>
    </html> `.text;
}

export function enrollPage(csrf: string): string {
  return layout({
    title: 'Enroll a passkey',
    page: 'enroll',
    csrf,
    body: html`<section class="card">
      <p>
        This one-time link registers a passkey for the operator it was made for. Your authenticator (a phone, a security
        key, the computer's own) keeps the private key; the signer keeps only the public key.
      </p>
      <button id="register" type="button" class="approve">Register a passkey</button>
      <p id="to-login" hidden><a href="/login">Log in to the console</a></p>
    </section>`,
  });
}

export function loginPage(csrf: string): string {
  return layout({
    title: 'Log in',
    page: 'login',
    csrf,
    body: html`<section class="card">
      <p>Log in with the passkey you enrolled (<code>sa-forge-signer operator enroll NAME</code> gives a link).</p>
      <button id="login" type="button" class="approve">Log in with a passkey</button>
    </section>`,
  });
}

/** `-1005000 lamports (-0.001005 SOL)`. */
export function lamports(n: number | null): string {
  if (n === null) return 'unknown';
  const v = BigInt(n);
  const abs = v < 0n ? -v : v;
  const fraction = (abs % LAMPORTS_PER_SOL).toString().padStart(9, '0').replace(/0+$/, '');
  return `${n} lamports (${v < 0n ? '-' : ''}${abs / LAMPORTS_PER_SOL}${fraction ? `.${fraction}` : ''} SOL)`;
}

function tokenAmount(base: string, decimals: number | null): string {
  return decimals === null ? `${base} base units` : `${uiAmount(BigInt(base), decimals)} (${base} base units)`;
}

const sign = (n: number | bigint | null) => (n === null ? '' : n < 0 ? 'negative' : n > 0 ? 'positive' : '');

function tokenRows(tokens: readonly TokenFigure[]): Html[] {
  return tokens.map(
    (t) =>
      html`<tr>
        <th>token <code>${t.mint}</code></th>
        <td>
          <span class="${sign(BigInt(t.change))}">${tokenAmount(t.change, t.decimals)}</span>
          ${t.credits.length > 0 ? html`<br />${t.credits.map((c) => html`to <code>${c.owner}</code>: ${tokenAmount(c.amount, t.decimals)}<br />`)}` : ''}
        </td>
      </tr>`,
  );
}

const NOT_COUNTED: Record<NotCounted, string> = { revoked: 'revoked', not_configured: 'no longer an operator' };

/** The quorum line: how many approvals it takes, of whom, and the votes so far (names from the config). */
function quorumLine(a: ApprovalRecord): Html {
  const who = a.approvers === null ? 'any operator' : a.approvers.join(', ');
  const votes = a.votes
    .map(
      (v) =>
        `${v.operator} ${v.decision}${v.not_counted === undefined ? '' : ` (not counted: ${NOT_COUNTED[v.not_counted]})`}`,
    )
    .join(', ');
  return html`<tr>
    <th>approvals needed</th>
    <td>${a.required} of ${who}; votes so far: ${votes === '' ? 'none' : votes}</td>
  </tr>`;
}

/** Buttons for an operator who may still vote: one of the approvers, not having approved already. */
function actions(a: ApprovalRecord, operator: string): Html {
  if (a.approvers !== null && !a.approvers.includes(operator))
    return html`<p class="muted">You are not one of this key's approvers.</p>`;
  const approved = a.votes.some(
    (v) => v.operator === operator && v.decision === 'approved' && v.not_counted === undefined,
  );
  return html`<div class="actions">
    ${
      approved
        ? html`<p class="muted">You approved; waiting for the other approvers.</p>`
        : html`<button type="button" class="approve" data-decide="approved">Approve with passkey</button>`
    }
    <button type="button" class="reject" data-decide="rejected">Reject with passkey</button>
  </div>`;
}

/**
 * Above the figures, when the policy in force now would refuse them (a reload since the sign asked): the approver
 * learns that approving sends nothing, since the sign is judged again by that policy after the decision.
 */
function policyNowWarning(refused: Refusal | null): Html {
  if (refused === null) return html``;
  return html`<p class="policy-now" role="alert">
    <b>The policy in force now refuses this</b> (<code>${refused.reason}</code>): ${untrusted(refused.message, 600)}.
    Approving it sends nothing.
  </p>`;
}

/** `$4.00`, or `none` for a cap that is not set. */
const dollars = (d: string | null): string => (d === null ? 'none' : `$${d}`);

/** What `left` dollars less `value` leaves, never below 0, for the card's "after this one" (both dollar strings). */
function dollarsAfter(left: string, value: string): string {
  const micros = (d: string) => {
    const [whole = '0', fraction = ''] = d.split('.');
    return BigInt(whole) * 1_000_000n + BigInt(fraction.padEnd(6, '0').slice(0, 6));
  };
  const rest = micros(left) - micros(value);
  return formatUsd(rest > 0n ? rest : 0n);
}

/**
 * A priced key's approval: the dollar value the signer computed for this sign (at price + confidence) and what is
 * left of the key's dollar cap today, before and after it; nothing for a key without dollar caps.
 */
function dollarRows(a: ApprovalRecord, key: KeyView | undefined): Html {
  const usd = key?.policy.usd ?? null;
  if ((a.usd_value ?? null) === null && usd === null) return html``;
  const value = a.usd_value ?? null;
  const left = usd?.remaining_daily ?? null;
  return html`<tr data-usd-value="${value ?? ''}">
      <th>dollar value</th>
      <td>${value === null ? 'not valued' : html`<b>$${value}</b> (what leaves the key, at price + confidence)`}</td>
    </tr>
    ${
      usd === null
        ? ''
        : html`<tr data-usd-left="${left ?? ''}">
            <th>dollars left today</th>
            <td>
              ${left === null ? 'no daily dollar cap' : html`$${left} of ${dollars(usd.per_day)}${value === null ? '' : html` ($${dollarsAfter(left, value)} after this one)`}`}
            </td>
          </tr>`
    }`;
}

function approvalCard(
  a: ApprovalRecord & { policy_now: Refusal | null },
  now: number,
  operator: string,
  key: KeyView | undefined,
): Html {
  const isMessage = a.message !== undefined && a.message !== null;
  const destinations = a.destinations ?? [];
  const computed = isMessage
    ? html`<tr>
          <th>signs</th>
          <td>a message, not a transaction: nothing is sent, but the signature can log in or authorise as this key</td>
        </tr>
        ${
          a.message_description
            ? html`<tr>
                <th>what it is</th>
                <td>${untrusted(a.message_description, 600)}</td>
              </tr>`
            : ''
        }`
    : html`<tr>
          <th>SOL change of the key</th>
          <td><span class="${sign(a.balance_change)}">${lamports(a.balance_change)}</span></td>
        </tr>
        ${dollarRows(a, key)} ${tokenRows(a.tokens ?? [])}
        <tr>
          <th>SOL destinations</th>
          <td>
            ${destinations.length === 0 ? 'none' : destinations.map((d) => html`<code>${d.address}</code>: +${lamports(d.lamports)}<br />`)}
          </td>
        </tr>
        <tr>
          <th>programs</th>
          <td>${(a.programs ?? []).map((p) => html`<code>${p}</code><br />`)}</td>
        </tr>
        <tr>
          <th>fee</th>
          <td>${lamports(a.fee)}</td>
        </tr>
        <tr>
          <th>fee payer</th>
          <td><code>${a.fee_payer ?? 'unknown'}</code></td>
        </tr>
        <tr>
          <th>compute units</th>
          <td>${a.compute_units ?? 'unknown'}</td>
        </tr>`;
  return html`<section class="card" data-approval="${a.id}" data-votes="${a.votes.length}">
    <h3>
      Approval <code>${a.id}</code> · key <b>${a.key}</b> ·
      <span data-expires="${a.expires_at}">${Math.max(0, a.expires_at - now)} s left</span>
      <span class="muted">(until ${new Date(a.expires_at * 1000).toISOString()})</span>
    </h3>
    ${policyNowWarning(a.policy_now)}
    <div class="computed">
      <p class="muted">Computed by the signer from its own simulation:</p>
      <table class="figures">
        ${computed}
        <tr>
          <th>payload hash</th>
          <td><code>${a.payload_hash}</code></td>
        </tr>
        <tr>
          <th>requested by</th>
          <td>${untrusted(a.requested_by, 80)}</td>
        </tr>
        ${quorumLine(a)}
      </table>
    </div>
    ${
      isMessage
        ? html`<div class="agent">
            <p class="label">The message to be signed, exactly (the agent's text, not verified):</p>
            <blockquote>${untrusted(a.message ?? '', MAX_MESSAGE_BYTES)}</blockquote>
          </div>`
        : ''
    }
    <div class="agent">
      <p class="label">The agent's own words (its summary, not verified by the signer):</p>
      <blockquote>${untrusted(a.summary)}</blockquote>
    </div>
    ${actions(a, operator)}
  </section>`;
}

function keyRows(k: KeyView, admin: boolean): Html {
  const p = k.policy;
  const halt = k.halted
    ? html`<span class="halted">halted</span> by ${untrusted(k.halted.by, 80)}: ${untrusted(k.halted.reason)}
        ${admin ? html`<br /><button type="button" data-resume="${k.name}">Resume ${k.name}</button>` : ''}`
    : admin
      ? html`<form class="inline" data-halt="${k.name}">
          <input name="reason" placeholder="reason" aria-label="reason to halt ${k.name}" /><button type="submit">
            Halt ${k.name}
          </button>
        </form>`
      : html`signing`;
  const tokens = p.tokens.map(
    (t) =>
      html`<tr>
        <td></td>
        <td colspan="2">token <code>${t.mint}</code></td>
        <td>${t.per_day} per day${t.per_tx === null ? '' : html`, ${t.per_tx} per tx`}</td>
        <td>${t.spent_or_reserved_24h}</td>
        <td>${t.remaining_daily}</td>
        <td></td>
      </tr>`,
  );
  const usd = p.usd;
  const dollarRow =
    usd === null
      ? ''
      : html`<tr data-usd-key="${k.name}">
          <td></td>
          <td colspan="2">
            dollars${usd.approve_above === null ? '' : html` (approval above ${dollars(usd.approve_above)})`}
          </td>
          <td>
            ${usd.per_day === null ? 'no daily cap' : `${dollars(usd.per_day)} per day`}${usd.per_tx === null ? '' : html`, ${dollars(usd.per_tx)} per tx`}
          </td>
          <td>$${usd.spent_or_reserved_24h}</td>
          <td>${usd.remaining_daily === null ? 'no daily dollar cap' : `$${usd.remaining_daily}`}</td>
          <td></td>
        </tr>`;
  return html`<tr>
      <td><b>${k.name}</b><br /><code>${k.pubkey}</code></td>
      <td>${k.class}</td>
      <td>
        ${k.approval}${p.approve_above_lamports === null ? '' : html` above ${lamports(p.approve_above_lamports)}`}
      </td>
      <td>
        ${lamports(k.daily_lamport_cap)} per
        day${p.per_tx_lamports === null ? '' : html`<br />${lamports(p.per_tx_lamports)} per tx`}
      </td>
      <td>${lamports(k.spent_or_reserved_24h)}</td>
      <td>${lamports(p.remaining_daily_lamports)}</td>
      <td>${halt}</td>
    </tr>
    ${dollarRow} ${tokens}`;
}

function auditRow(e: AuditEntry): Html {
  return html`<tr>
    <td>${new Date(e.ts * 1000).toISOString()}</td>
    <td>${untrusted(e.key, 64)}</td>
    <td>${e.command}</td>
    <td>${untrusted(e.outcome, 40)}</td>
    <td>${e.balance_change === null ? '' : lamports(e.balance_change)}</td>
    <td>${untrusted(e.summary, 160)}</td>
    <td><code>${e.signature ?? ''}</code></td>
  </tr>`;
}

function deliveriesSection(d: ConsoleData['deliveries']): Html {
  const c = d.counts;
  return html`<p>
      ${c.pending} pending, ${c.delivered} delivered, ${c.failed} failed
      <span class="muted">(sa-forge-signer notify list shows more)</span>
    </p>
    ${
      d.notifications.length === 0
        ? html`<p class="muted">No notifications yet (webhooks are configured under notify).</p>`
        : html`<table>
            <tr>
              <th>created</th>
              <th>event</th>
              <th>key</th>
              <th>hook</th>
              <th>status</th>
              <th>attempts</th>
              <th>next attempt or settled</th>
              <th>last error</th>
            </tr>
            ${d.notifications.map(
              (n) =>
                html`<tr>
                  <td>${n.created_at}</td>
                  <td>${n.event}</td>
                  <td>${n.key === null ? '' : untrusted(n.key, 64)}</td>
                  <td><code>${n.hook}</code></td>
                  <td>${n.status}</td>
                  <td>${n.attempts}</td>
                  <td>${n.next_attempt_at ?? n.settled_at ?? ''}</td>
                  <td>${n.last_error === null ? '' : untrusted(n.last_error, 200)}</td>
                </tr>`,
            )}
          </table>`
    }`;
}

/** When the chain was last walked: entries written since are in the next walk (audit-verdict.ts). */
function verdictAsOf(seconds: number): string {
  return seconds < 1 ? 'as of just now' : `as of ${String(seconds)} s ago`;
}

export function consolePage(csrf: string, who: SignedInOperator, data: ConsoleData): string {
  const admin = who.role === 'admin';
  const asOf = verdictAsOf(data.now - data.verdict.checkedAt);
  const result = data.verdict.result;
  const verdict = result.ok
    ? html`<p class="verdict-ok">
        audit verify ${asOf}: ok, ${result.entries} entries, chain and head record agree
        <span class="muted">(the chain is walked again at most once a minute)</span>
      </p>`
    : html`<p class="verdict-broken">
        audit verify ${asOf}: broken at line ${result.line}: ${untrusted(result.reason)}
      </p>`;
  const keys =
    data.keys === null
      ? html`<p class="muted">
            Keys are not readable yet: ${untrusted(data.keysError ?? 'the signer is starting', 300)}
          </p>
          ${data.halts.map(
            (h) =>
              html`<p>
                <b>${h.key}</b> <span class="halted">halted</span> by ${untrusted(h.by, 80)}: ${untrusted(h.reason)}
              </p>`,
          )}`
      : html`<table>
          <tr>
            <th>key</th>
            <th>class</th>
            <th>approval</th>
            <th>caps</th>
            <th>spent or reserved (24 h)</th>
            <th>remaining today</th>
            <th>halt</th>
          </tr>
          ${data.keys.map((k) => keyRows(k, admin))}
        </table>`;
  return layout({
    title: 'Operator console',
    waiting: data.approvals.length,
    page: 'console',
    csrf,
    operator: who,
    body: html`<h2>Waiting for approval (${data.approvals.length})</h2>
      ${
        data.approvals.length === 0
          ? html`<p class="muted">No sign is waiting for an operator.</p>`
          : data.approvals.map((a) =>
              approvalCard(
                a,
                data.now,
                who.name,
                data.keys?.find((k) => k.name === a.key),
              ),
            )
      }
      <h2>Keys</h2>
      <section class="card">${keys}</section>
      ${treasurySection(data.treasuries, data.treasuriesError)}
      <h2>Notifications</h2>
      <section class="card" id="notifications">${deliveriesSection(data.deliveries)}</section>
      <h2>Audit log</h2>
      <section class="card">
        ${verdict}
        <table>
          <tr>
            <th>time</th>
            <th>key</th>
            <th>command</th>
            <th>outcome</th>
            <th>balance change</th>
            <th>summary (agent's words)</th>
            <th>signature</th>
          </tr>
          ${data.audit.map(auditRow)}
        </table>
      </section>`,
  });
}
