/**
 * The console's own script, served as /assets/console.js (an ES module; the CSP allows scripts from this origin
 * only). It runs the WebAuthn ceremonies with @simplewebauthn/browser, served beside it from node_modules, and
 * sends every state change with the page's CSRF token. Each page says which part runs in <body data-page>.
 */

/** How often an open console page asks which approvals are pending (PENDING_POLLS_PER_MINUTE bounds the total). */
export const PENDING_POLL_MS = 2000;

export const CONSOLE_SCRIPT = String.raw`import { startAuthentication, startRegistration } from '/assets/webauthn/index.js';

const csrf = document.querySelector('meta[name="csrf-token"]').getAttribute('content');

function say(text, kind) {
  const el = document.getElementById('status');
  el.textContent = text;
  el.dataset.kind = kind || '';
}

async function post(path, body) {
  const res = await fetch(path, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf },
    body: JSON.stringify(body || {}),
  });
  const json = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(json.error || 'HTTP ' + res.status);
  return json;
}

// Ceremonies and requests under way: the page never reloads itself in the middle of one.
let busy = 0;

function guarded(button, work) {
  button.addEventListener('click', async (event) => {
    event.preventDefault();
    button.disabled = true;
    busy++;
    try {
      await work();
    } catch (e) {
      say(e instanceof Error ? e.message : String(e), 'error');
    } finally {
      busy--;
      button.disabled = false;
    }
  });
}

function enrollPage() {
  // The token came in the fragment, which no server saw; it leaves the address bar (and the history) at once.
  const token = location.hash.slice(1);
  history.replaceState(null, '', location.pathname);
  const button = document.getElementById('register');
  if (!token) {
    say('This link carries no enrollment token: open the whole link sa-forge-signer operator enroll printed.', 'error');
    button.disabled = true;
    return;
  }
  guarded(button, async () => {
    say('Asking the signer for a registration…');
    const options = await post('/api/enroll/options', { token });
    say('Confirm with your authenticator…');
    const response = await startRegistration({ optionsJSON: options });
    const done = await post('/api/enroll/verify', { token, response });
    say('Passkey registered for operator ' + done.operator + '. You can log in now.', 'ok');
    button.hidden = true;
    document.getElementById('to-login').hidden = false;
  });
}

function loginPage() {
  guarded(document.getElementById('login'), async () => {
    const options = await post('/api/login/options');
    say('Confirm with your authenticator…');
    const response = await startAuthentication({ optionsJSON: options });
    await post('/api/login/verify', { response });
    location.assign('/');
  });
}

function consolePage() {
  for (const card of document.querySelectorAll('[data-approval]')) {
    const id = card.dataset.approval;
    for (const button of card.querySelectorAll('[data-decide]')) {
      const decision = button.dataset.decide;
      guarded(button, async () => {
        say((decision === 'approved' ? 'Approving ' : 'Rejecting ') + id + ': confirm with your passkey…');
        const asked = await post('/api/approvals/' + encodeURIComponent(id) + '/options', { decision });
        const response = await startAuthentication({ optionsJSON: asked.options });
        const done = await post('/api/approvals/' + encodeURIComponent(id) + '/decide', {
          decision,
          nonce: asked.nonce,
          response,
        });
        say('Approval ' + done.id + ' is ' + done.status + '.', 'ok');
        location.reload();
      });
    }
  }
  for (const form of document.querySelectorAll('[data-halt]')) {
    guarded(form.querySelector('button'), async () => {
      const reason = form.querySelector('input').value;
      await post('/api/keys/' + encodeURIComponent(form.dataset.halt) + '/halt', { reason });
      location.reload();
    });
  }
  for (const form of document.querySelectorAll('[data-revoke]')) {
    guarded(form.querySelector('button'), async () => {
      const target = form.querySelector('input[name="target"]').value;
      const reason = form.querySelector('input[name="reason"]').value;
      await post('/api/credentials/revoke', { target, reason });
      location.reload();
    });
  }
  for (const button of document.querySelectorAll('[data-resume]')) {
    guarded(button, async () => {
      const at = '/api/keys/' + encodeURIComponent(button.dataset.resume) + '/resume';
      say('Resuming ' + button.dataset.resume + ': confirm with your passkey…');
      const asked = await post(at + '/options');
      const response = await startAuthentication({ optionsJSON: asked.options });
      await post(at, { nonce: asked.nonce, response });
      location.reload();
    });
  }
  const logout = document.getElementById('logout');
  if (logout)
    guarded(logout, async () => {
      await post('/api/logout');
      location.assign('/login');
    });
  const tick = () => {
    const now = Date.now() / 1000;
    for (const el of document.querySelectorAll('[data-expires]')) {
      const left = Math.max(0, Math.round(Number(el.dataset.expires) - now));
      el.textContent = left > 0 ? left + ' s left' : 'expired';
    }
  };
  tick();
  setInterval(tick, 1000);
  watchPending();
}

// An approval that arrives, gets a vote or is decided by someone else shows without a reload by hand: the page
// asks which approvals are pending and renders itself anew (the server escapes what an agent wrote) when that
// changed, unless the operator is in the middle of a ceremony or has typed a halt reason. The title counts them.
function watchPending() {
  const state = (approvals) => approvals.map((a) => a.id + ':' + a.votes).sort().join();
  const cards = [...document.querySelectorAll('[data-approval]')];
  const shown = state(cards.map((card) => ({ id: card.dataset.approval, votes: card.dataset.votes })));
  const title = document.title.replace(/^\(\d+\) /, '');
  const typing = () =>
    [...document.querySelectorAll('[data-halt] input, [data-revoke] input')].some((input) => input.value !== '');
  const poll = async () => {
    const res = await fetch('/api/pending', { credentials: 'same-origin', headers: { Accept: 'application/json' } });
    if (res.status === 401) {
      location.assign('/login');
      return;
    }
    if (!res.ok) return;
    const pending = await res.json();
    document.title = (pending.length > 0 ? '(' + pending.length + ') ' : '') + title;
    if (state(pending) === shown) return;
    if (busy === 0 && !typing()) location.reload();
    else say('The approvals waiting changed: the page shows them once you are done here.');
  };
  setInterval(() => poll().catch(() => undefined), ${String(PENDING_POLL_MS)});
}

const pages = { enroll: enrollPage, login: loginPage, console: consolePage };
const page = pages[document.body.dataset.page];
if (page) page();
// The buttons work from now on (a test, or a person's quick click, waits for this).
document.body.dataset.ready = 'true';
`;
