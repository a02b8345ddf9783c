/**
 * The console's treasury section (docs/treasury.md): for each treasury-backed key, each account's allowance as the
 * chain holds it now (delegate, delegated amount) beside the plan for the next period (the amount the policy
 * implies, and which cap sized it), and whether a refill is due. Every figure is the chain's or the config's; all
 * of it is escaped like the rest of the page, and the reasons a plan could not be made are bounded.
 */
import type { TreasuryAccountStatus, TreasuryStatus } from '../treasury/status';
import { uiAmount } from '../util/token-amounts';
import { Html, html, untrusted } from './html';

function amount(base: bigint | null, decimals: number | null): string {
  if (base === null) return 'unknown';
  return decimals === null ? `${base} base units` : `${uiAmount(base, decimals)} (${base} base units)`;
}

/** What the chain says of the delegate, in the operator's terms. */
function delegateCell(a: TreasuryAccountStatus, keyPubkey: string): Html {
  const c = a.chain;
  if (c === null) return html`<span class="halted">not a token account on chain</span>`;
  if (c.delegate === null) return html`<span class="halted">none (revoked): signs are refused</span>`;
  if (c.delegate !== keyPubkey) {
    return html`<span class="halted">another key</span> <code>${c.delegate}</code>: signs are refused`;
  }
  return html`the key <code>${c.delegate}</code>`;
}

function accountRow(a: TreasuryAccountStatus, keyPubkey: string): Html {
  const decimals = a.chain?.decimals ?? a.plan?.decimals ?? null;
  const delegated = a.chain !== null && a.chain.delegate === keyPubkey;
  const refill = a.refillDue
    ? html`<span class="halted">refill due</span> (below ${amount(a.refillBelow, decimals)})`
    : !delegated
      ? html`<span class="halted">approve the plan again</span>`
      : a.refillBelow === null
        ? html``
        : html`not due (due below ${amount(a.refillBelow, decimals)})`;
  return html`<tr data-treasury-account="${a.account}">
    <td>
      <code>${a.account}</code><br /><span class="muted">mint</span> <code>${a.chain?.mint ?? a.plan?.mint ?? ''}</code>
    </td>
    <td>${delegateCell(a, keyPubkey)}</td>
    <td data-figure="delegated">${amount(a.chain?.delegatedAmount ?? null, decimals)}</td>
    <td data-figure="planned">
      ${a.plan === null ? 'no plan' : html`${amount(a.plan.amount, decimals)}<br /><span class="muted">sized by <code>${a.plan.basis}</code>: ${a.plan.why}</span>`}
    </td>
    <td>${refill}</td>
  </tr>`;
}

function keyBlock(t: TreasuryStatus): Html {
  return html`<div data-treasury-key="${t.key}">
    <h3>key <b>${t.key}</b> · owner <code>${t.owner}</code></h3>
    ${
      t.problem === null
        ? ''
        : html`<p class="policy-now" role="alert">
            No plan: <code>${t.problem.code}</code> ${untrusted(t.problem.message, 400)}
          </p>`
    }
    <table>
      <tr>
        <th>treasury account</th>
        <th>delegate on chain</th>
        <th>allowance on chain</th>
        <th>plan for the next period</th>
        <th>refill</th>
      </tr>
      ${t.accounts.map((a) => accountRow(a, t.pubkey))}
    </table>
    <p class="muted">
      To refill: <code>sa-forge-signer treasury plan ${t.key}</code>, sign it with the owner's wallet, then
      <code>sa-forge-signer treasury submit FILE</code>.
    </p>
  </div>`;
}

/** The section, or nothing when no key has a treasury. */
export function treasurySection(treasuries: readonly TreasuryStatus[] | null, error: string | null): Html {
  if (treasuries === null) {
    return html`<h2>Treasuries</h2>
      <section class="card" id="treasuries">
        <p class="muted">The treasury accounts could not be read: ${untrusted(error ?? 'unknown', 300)}</p>
      </section>`;
  }
  if (treasuries.length === 0) return html``;
  return html`<h2>Treasuries</h2>
    <section class="card" id="treasuries">${treasuries.map(keyBlock)}</section>`;
}
