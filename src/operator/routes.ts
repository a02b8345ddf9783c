/**
 * The console's routes: HTTP in, a ceremony or a ledger read out (passkeys.ts, console-data.ts), nothing more. Every
 * POST has passed the CSRF check before it reaches these; the API's answers are JSON, the pages HTML.
 */
import { randomBytes } from 'node:crypto';
import { Router, type Request, type Response } from 'express';
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { DoubleCsrfUtilities } from 'csrf-csrf';
import type { Logger } from 'pino';
import type { OperatorConfig } from '../config/types';
import { votersOf } from '../ledger/records';
import type { ApprovalRecord, Ledger } from '../ledger/types';
import type { Refusal } from '../signer/refusals';
import { sendJson, sendError } from '../http/send';
import type { HaltResult, KeyView } from '../signer/types';
import type { TreasuryStatus } from '../treasury/status';
import { isRecord } from '../util/is-record';
import type { Decision } from './challenge';
import { AuditVerdicts } from './audit-verdict';
import { pendingApprovals, readConsoleData } from './console-data';
import { recordDecision } from './decide';
import './locals';
import type { SignedInOperator } from './locals';
import { requireAdmin, requireOperator, type RequireOperatorDeps } from './middleware/require-operator';
import { consolePage, enrollPage, loginPage } from './pages';
import {
  decideWithPasskey,
  decisionOptions,
  login,
  loginOptions,
  registerPasskey,
  registrationOptions,
  resumeOptions,
  resumeWithPasskey,
  type CeremonyDeps,
} from './passkeys';
import type { Outcome } from './outcome';
import { sessionKey } from './session';

/**
 * Halts as the engine makes them (its HaltBook: a halt the ledger cannot take yet still holds in this process, and
 * both are announced to the webhooks), in the operator's name.
 */
export interface ConsoleHalts {
  halt(key: string, reason: string, operator: string): Promise<HaltResult>;
  resume(key: string, operator: string): Promise<boolean>;
}

export interface RouteDeps {
  ledger: () => Promise<Ledger>;
  operators: () => readonly OperatorConfig[];
  keys: () => Promise<KeyView[]>;
  policyNow: (approval: ApprovalRecord) => Promise<Refusal | null>;
  treasuries?: () => Promise<TreasuryStatus[]>;
  halts: ConsoleHalts;
  ceremonies: () => Promise<CeremonyDeps>;
  csrf: DoubleCsrfUtilities;
  nowMs: () => number;
  logger: Logger;
  /** Tells the webhooks an approval was decided. */
  decided: (record: ApprovalRecord) => Promise<void>;
}

const json = (res: Response, status: number, value: unknown) => sendJson(res, status, JSON.stringify(value));

function answer<T>(res: Response, outcome: Outcome<T>): void {
  if (outcome.ok) json(res, 200, outcome.value);
  else if (outcome.reason !== undefined) json(res, outcome.status, { error: outcome.error, reason: outcome.reason });
  else sendError(res, outcome.status, outcome.error);
}

function page(res: Response, text: string): void {
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  res.send(text);
}

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const body = (req: Request): Record<string, unknown> => (isRecord(req.body) ? req.body : {});
const decisionOf = (v: unknown): Decision | null => (v === 'approved' || v === 'rejected' ? v : null);
/**
 * A WebAuthn response as the browser library sends it, in the shape the ceremony takes (the library's verification
 * checks everything inside it).
 */
function credentialJson(v: unknown): (AuthenticationResponseJSON & RegistrationResponseJSON) | null {
  return isRecord(v) && typeof v.id === 'string' && isRecord(v.response)
    ? (v as unknown as AuthenticationResponseJSON & RegistrationResponseJSON)
    : null;
}
const who = (res: Response): SignedInOperator => {
  const operator = res.locals.operator;
  if (!operator) throw new Error('a signed-in route ran without requireOperator');
  return operator;
};

export function pageRoutes(deps: RouteDeps, guard: RequireOperatorDeps): Router {
  const router = Router();
  router.get('/enroll', (req, res) => page(res, enrollPage(deps.csrf.generateCsrfToken(req, res))));
  router.get('/login', (req, res) => page(res, loginPage(deps.csrf.generateCsrfToken(req, res))));
  const verdicts = new AuditVerdicts(deps.logger);
  router.get('/', requireOperator(guard, 'page'), async (req, res) => {
    const now = Math.floor(deps.nowMs() / 1000);
    const data = await readConsoleData(await deps.ledger(), deps, verdicts, now);
    page(res, consolePage(deps.csrf.generateCsrfToken(req, res), who(res), data));
  });
  return router;
}

/**
 * What an open console page asks every few seconds to notice approvals that arrived, got a vote or were decided
 * elsewhere: each pending approval's id and number of votes, nothing an agent wrote.
 */
export function pendingRoute(deps: RouteDeps, guard: RequireOperatorDeps): Router {
  const router = Router();
  router.get('/', requireOperator(guard, 'api'), async (_req, res) => {
    const pending = await pendingApprovals(await deps.ledger(), Math.floor(deps.nowMs() / 1000));
    json(
      res,
      200,
      pending.map((a) => ({ id: a.id, votes: a.votes.length })),
    );
  });
  return router;
}

export function apiRoutes(deps: RouteDeps, guard: RequireOperatorDeps): Router {
  const router = Router();
  const signedIn = requireOperator(guard, 'api');

  router.post('/enroll/options', async (req, res) => {
    const token = str(body(req).token);
    if (token === null) {
      sendError(res, 400, 'the enrollment token is missing');
      return;
    }
    answer(res, await registrationOptions(await deps.ceremonies(), token));
  });
  router.post('/enroll/verify', async (req, res) => {
    const token = str(body(req).token);
    const response = credentialJson(body(req).response);
    if (token === null || response === null) {
      sendError(res, 400, 'the enrollment token or the passkey answer is missing');
      return;
    }
    const result = await registerPasskey(await deps.ceremonies(), token, response);
    if (result.ok)
      deps.logger.info(
        { operator: result.value.operator, credential: result.value.credentialId },
        'operator enrolled a passkey',
      );
    answer(res, result);
  });

  router.post('/login/options', async (_req, res) => json(res, 200, await loginOptions(await deps.ceremonies())));
  router.post('/login/verify', async (req, res) => {
    const response = credentialJson(body(req).response);
    if (response === null) {
      sendError(res, 400, 'the passkey answer is missing');
      return;
    }
    const result = await login(await deps.ceremonies(), response);
    const session = res.locals.session;
    if (result.ok && session) {
      const ledger = await deps.ledger();
      // A login made before in this browser ends: a copy of its cookie opens nothing any more.
      if (session.sid !== undefined && session.operator !== undefined) await ledger.endSession(sessionKey(session.sid));
      // A new session id at login: nothing from before the login (a planted cookie, its CSRF tokens) carries over.
      session.sid = randomBytes(16).toString('base64url');
      session.operator = result.value.name;
      session.credential = result.value.credential;
      session.login_at = deps.nowMs();
      // Live while the ledger holds it: logout and revocation end it in every replica (require-operator.ts).
      await ledger.openSession(
        {
          id_hash: sessionKey(session.sid),
          operator: result.value.name,
          credential: result.value.credential,
          created_at: Math.floor(session.login_at / 1000),
          expires_at: Math.ceil((session.login_at + guard.ttlMs) / 1000),
        },
        Math.floor(session.login_at / 1000),
      );
      await session.save();
      deps.logger.info({ operator: result.value.name, credential: result.value.credential }, 'operator logged in');
      json(res, 200, { operator: result.value.name, role: result.value.role });
      return;
    }
    answer(res, result);
  });
  router.post('/logout', async (_req, res) => {
    const session = res.locals.session;
    // Ended in the ledger first: the cookie's copies (another tab, a stolen one) open nothing afterwards either.
    if (session?.sid !== undefined && session.operator !== undefined)
      await (await deps.ledger()).endSession(sessionKey(session.sid));
    session?.destroy();
    json(res, 200, { ok: true });
  });

  router.post('/approvals/:id/options', signedIn, async (req, res) => {
    const decision = decisionOf(body(req).decision);
    if (decision === null) {
      sendError(res, 400, 'decision must be "approved" or "rejected"');
      return;
    }
    answer(res, await decisionOptions(await deps.ceremonies(), who(res), String(req.params.id), decision));
  });
  router.post('/approvals/:id/decide', signedIn, async (req, res) => {
    const b = body(req);
    const decision = decisionOf(b.decision);
    const nonce = str(b.nonce);
    const response = credentialJson(b.response);
    if (decision === null || nonce === null || response === null) {
      sendError(res, 400, 'a decision needs decision, nonce and the passkey answer');
      return;
    }
    const ledger = await deps.ledger();
    const operator = who(res);
    const result = await decideWithPasskey(
      await deps.ceremonies(),
      operator,
      { approvalId: String(req.params.id), decision, nonce, response },
      (d) => recordDecision(ledger, { ...d, voters: votersOf(deps.operators()) }, deps.decided),
    );
    if (result.ok)
      deps.logger.info(
        { approval: result.value.id, decision, operator: operator.name, credential: response.id },
        'operator decided an approval with a passkey',
      );
    answer(res, result);
  });

  router.post('/keys/:key/halt', signedIn, requireAdmin(), async (req, res) => {
    const key = String(req.params.key);
    const reason = str(body(req).reason)?.trim();
    if (reason === undefined || reason === '') {
      sendError(res, 400, 'give a reason for the halt');
      return;
    }
    if (!(await knownKey(deps, key))) {
      sendError(res, 404, `no key ${key} in the config`);
      return;
    }
    const result = await deps.halts.halt(key, reason, who(res).name);
    if (result.not_recorded.length > 0) {
      // The engine holds the halt in this process and keeps writing it; the ledger has not taken it yet.
      sendError(res, 503, `the halt holds here but is not recorded yet: ${result.not_recorded[0]?.error ?? ''}`);
      return;
    }
    json(res, 200, result);
  });
  // Lifting a halt lets a key spend again: like a decision it takes a passkey assertion, not only the session.
  router.post('/keys/:key/resume/options', signedIn, requireAdmin(), async (req, res) => {
    const key = String(req.params.key);
    if (!(await knownKey(deps, key))) {
      sendError(res, 404, `no key ${key} in the config`);
      return;
    }
    answer(res, await resumeOptions(await deps.ceremonies(), who(res), key));
  });
  router.post('/keys/:key/resume', signedIn, requireAdmin(), async (req, res) => {
    const key = String(req.params.key);
    const b = body(req);
    const nonce = str(b.nonce);
    const response = credentialJson(b.response);
    if (nonce === null || response === null) {
      sendError(res, 400, 'a resume needs the nonce and the passkey answer (POST …/resume/options first)');
      return;
    }
    if (!(await knownKey(deps, key))) {
      sendError(res, 404, `no key ${key} in the config`);
      return;
    }
    const operator = who(res);
    const result = await resumeWithPasskey(
      await deps.ceremonies(),
      operator,
      { key, nonce, response },
      (credential) => {
        deps.logger.info({ key, operator: operator.name, credential }, 'operator lifted a halt with a passkey');
        return deps.halts.resume(key, operator.name);
      },
    );
    answer(res, result);
  });
  return router;
}

async function knownKey(deps: RouteDeps, key: string): Promise<boolean> {
  return (await deps.keys()).some((k) => k.name === key);
}
