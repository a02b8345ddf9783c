/**
 * The probes, before bearer auth: `GET /health` (the process answers) and `GET /ready` (the engine is open, the
 * ledger answers, the RPC is on the cluster's genesis). Readiness is asked of the engine at most once a second, so a
 * probe storm never reaches the ledger or the RPC; only a caller with a valid token is shown the detail (its error
 * texts name the ledger and the RPC), anyone else the status alone.
 */
import { Router } from 'express';
import type { Logger } from 'pino';
import type { TokenVerifier } from '../bearer-tokens';
import type { SignerEngine } from '../../signer/types';
import { errorMessage } from '../../util/errors';
import { sendJson } from '../send';
import type { ServiceState } from '../service-state';

const READY_CACHE_MS = 1000;

interface Readiness {
  at: number;
  ok: boolean;
  detail: Record<string, string>;
}

export function probes(opts: {
  engineIfOpen: () => SignerEngine | null;
  state: ServiceState;
  verifier: TokenVerifier;
  logger: Logger;
}): Router {
  let last: Readiness | null = null;
  const readiness = async (engine: SignerEngine): Promise<Readiness> => {
    if (last !== null && Date.now() - last.at <= READY_CACHE_MS) return last;
    const r = await engine.ready().catch((e: unknown) => ({ ok: false, detail: { engine: errorMessage(e) } }));
    if (!r.ok) opts.logger.warn({ detail: r.detail }, 'not ready');
    last = { at: Date.now(), ...r };
    return last;
  };

  const router = Router();
  router.get('/health', (_req, res) => {
    sendJson(res, 200, '{"status":"ok"}');
  });
  router.get('/ready', async (req, res) => {
    const engine = opts.engineIfOpen();
    let answer: { status: number; body: object };
    if (opts.state.draining) answer = { status: 503, body: { status: 'shutting down' } };
    else if (engine === null) answer = { status: 503, body: { status: 'starting' } };
    else {
      const r = await readiness(engine);
      const status = r.ok ? 'ready' : 'not ready';
      const authenticated = opts.verifier.verifyAuthorization(req.headers.authorization) !== null;
      answer = { status: r.ok ? 200 : 503, body: authenticated ? { status, detail: r.detail } : { status } };
    }
    sendJson(res, answer.status, JSON.stringify(answer.body));
  });
  return router;
}
