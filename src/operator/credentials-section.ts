/**
 * The console's credentials section (docs/credentials.md, "Revoking"): the blocks operators revoked in the ledger,
 * and for an admin a form to revoke one by its revocation id or an issued root by name. Reasons and names are
 * escaped and bounded like every other text on the page (a reason may be pasted from what an agent wrote).
 */
import type { ConsoleData } from './console-data';
import { html, untrusted, type Html } from './html';
import { MAX_REVOKE_REASON } from './revoke-credential';

/** The section, or nothing when the service has no credentials. */
export function credentialsSection(credentials: ConsoleData['credentials'], admin: boolean): Html {
  if (credentials === null) return html``;
  const { issued, revocations } = credentials;
  const form = admin
    ? html`<form class="inline" data-revoke>
          <input
            name="target"
            list="issued-roots"
            aria-label="revocation id or issued root name to revoke"
            placeholder="revocation id or issued root name"
            maxlength="128"
            size="40"
          />
          <input name="reason" aria-label="reason to revoke" placeholder="reason" maxlength="${MAX_REVOKE_REASON}" />
          <button type="submit">Revoke</button>
          <datalist id="issued-roots">${issued.map((name) => html`<option value="${name}"></option>`)}</datalist>
        </form>
        <p class="muted">
          Revoking a block refuses it and every credential narrowed from it, in every replica (within
          <code>timings.credential_revocation_poll_ms</code>); an issued root's name revokes its whole tree. It cannot
          be undone here.
        </p>`
    : html``;
  const list =
    revocations.length === 0
      ? html`<p class="muted">No credential revoked from the console.</p>`
      : html`<table>
          <tr>
            <th>time</th>
            <th>revocation id</th>
            <th>issued root</th>
            <th>by</th>
            <th>reason</th>
          </tr>
          ${revocations.map(
            (r) =>
              html`<tr data-revocation="${r.revocation_id}">
                <td>${new Date(r.ts * 1000).toISOString()}</td>
                <td><code>${untrusted(r.revocation_id.slice(0, 16), 16)}…</code></td>
                <td>${r.name === null ? '' : untrusted(r.name, 64)}</td>
                <td>${untrusted(r.by, 80)}</td>
                <td>${untrusted(r.reason)}</td>
              </tr>`,
          )}
        </table>`;
  return html`<h2>Credentials</h2>
    <section class="card" id="credentials">${form}${list}</section>`;
}
