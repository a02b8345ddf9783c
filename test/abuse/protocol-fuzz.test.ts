import { createHash } from 'node:crypto';
/**
 * Protocol fuzzing of the live HTTP service: the real app and listener on a loopback port, over a
 * real engine, chain and SQLite ledger, sent fast-check requests byte by byte. For every case: an answer (unless
 * the client itself gave up mid-body), never a 5xx unless the case injected an internal fault, every JSON-RPC
 * body valid against the MCP schema (JSONRPCErrorResponse / JSONRPCResultResponse, ajv), every other body the
 * HTTP layer's plain error, and the ledger untouched except by a sign or halt call the engine answered.
 */
import fs from 'node:fs';
import fc from 'fast-check';
import { RESOURCES } from '../../src/mcp/resources';
import type { SignerEngine } from '../../src/signer/types';
import { keyDirSecrets } from '../support/secrets';
import { ifSetUp } from '../support/set-up';
import { makeWorld, type World } from '../support/world';
import { LedgerWatch, recordLedgerRows } from './support/ledger-rows';
import { describeErrors, envelopeValidators, SCHEMA_COPY, SCHEMA_SHA256 } from './support/mcp-schema';
import { hostilePayload } from './support/payload-arbs';
import { fuzzCase, type FuzzCase } from './support/protocol-arbs';
import { RawClient, requestBytes, type RawResponse } from './support/raw-http';
import { ArtefactBuffer, recordFigures, recordSecrets } from './support/record';
import { issueTokens, serveInProcess, type InProcessService } from './support/service';

const SUITE = 'protocol-fuzz';
const RUNS = Number(process.env.ABUSE_FUZZ_RUNS ?? 20_000);
const FAULT_MARKER = 'abuse-injected-internal-fault';
/** Plain `{"error": …}` answers of the HTTP layer, before the JSON-RPC router. */
const HTTP_LAYER_STATUSES = new Set([400, 401, 403, 404, 405, 413, 415, 429]);
/** Answers Node's HTTP layer gives without a body (malformed request line or headers, an Expect it cannot meet, headers too large). */
const PARSER_STATUSES = new Set([400, 417, 431]);
const ENVELOPE_CODES: Record<number, number[]> = {
  400: [-32700, -32600, -32602, -32020, -32022],
  404: [-32601],
  200: [-32602, -32603],
};

/** The engine with one planted bug: a payload carrying the marker makes check and sign throw a TypeError. */
function withInjectedFault(engine: SignerEngine): SignerEngine {
  const trip = (payload: unknown): void => {
    if (JSON.stringify(payload ?? null).includes(FAULT_MARKER)) throw new TypeError('injected internal fault');
  };
  return {
    check: async (i) => (trip(i.payload), engine.check(i)),
    sign: async (i) => (trip(i.payload), engine.sign(i)),
    keyShow: (i) => engine.keyShow(i),
    budgetsShow: (p) => engine.budgetsShow(p),
    reconcileTreasuries: () => engine.reconcileTreasuries(),
    treasuryShow: () => engine.treasuryShow(),
    halt: (i) => engine.halt(i),
    resume: (k) => engine.resume(k),
    policyNow: (a) => engine.policyNow(a),
    verifyKeys: () => engine.verifyKeys(),
    ready: () => engine.ready(),
    inFlight: () => engine.inFlight(),
    close: () => engine.close(),
  };
}

interface Tally {
  cases: number;
  answered: number;
  noAnswer: number;
  jsonRpcErrors: number;
  jsonRpcResults: number;
  httpLayer: number;
  parser: number;
  accepted202: number;
  injected: number;
  ledgerWrites: number;
  signs: number;
  halts: number;
  byStatus: Record<string, number>;
  byFamily: Record<string, number>;
}

describe('protocol fuzzing of the live MCP service', () => {
  let w: World;
  let svc: InProcessService;
  let watch: LedgerWatch;
  let token: string;
  const artefacts = new ArtefactBuffer(SUITE);
  const pendingSecrets: Uint8Array[] = [];

  beforeAll(async () => {
    w = await makeWorld({
      keys: { alpha: { rate_limit_per_minute: 1_000_000 }, bravo: { rate_limit_per_minute: 1_000_000 }, charlie: {} },
    });
    recordSecrets(
      SUITE,
      keyDirSecrets(w.config.key_dir).map((s, i) => ({ label: `key file ${i}`, value: s })),
    );
    const issued = issueTokens(SUITE, [{ name: 'fuzz', keys: ['alpha', 'bravo'] }]);
    token = issued.tokens[0]!.token;
    svc = await serveInProcess({
      suite: SUITE,
      config: w.config,
      engine: withInjectedFault(w.engine),
      tokens: issued.config,
      serve: { rate_limit_per_minute: 100_000_000 },
    });
    watch = new LedgerWatch((w.config.ledger as { path: string }).path);
  });

  afterAll(async () => {
    ifSetUp(watch)?.close();
    await ifSetUp(svc)?.close();
    const world = ifSetUp(w);
    for (const r of world?.reports ?? []) artefacts.add('report', JSON.stringify(r));
    artefacts.flush();
    if (world) recordLedgerRows((world.config.ledger as { path: string }).path, SUITE);
    await world?.close();
  });

  it('the schema the suite validates with is the published 2026-07-28 schema, unedited', () => {
    expect(createHash('sha256').update(fs.readFileSync(SCHEMA_COPY)).digest('hex')).toBe(SCHEMA_SHA256);
    const v = envelopeValidators();
    expect(v.error({ jsonrpc: '2.0', error: { code: -32600, message: 'x' } })).toBe(true);
    expect(v.error({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'x' } })).toBe(false);
  });

  it(`${RUNS} fuzzed requests: no 5xx, no crash, schema-valid JSON-RPC errors, no ledger change but a sign or halt`, async () => {
    const validators = envelopeValidators();
    const alpha = w.keys.alpha!;
    const target = {
      feePayer: alpha.pubkey,
      destination: alpha.destination,
      otherKey: w.keys.charlie!.pubkey,
      overCap: alpha.daily_lamport_cap + 1,
      overBalance: 60_000_000_000,
    };
    const ctx = {
      token,
      keys: ['alpha', 'bravo'],
      otherKey: 'charlie',
      resourceUris: RESOURCES.map((r) => r.uri),
      // At least the rent-exempt minimum: a smaller transfer to a new account fails simulation.
      validPayload: (n: number) => w.transfer('alpha', 1_000_000 + n, 'protocol fuzz transfer'),
      hostilePayload: hostilePayload(target).map((h) => {
        pendingSecrets.push(...h.secrets);
        return h.payload;
      }),
      faultMarker: FAULT_MARKER,
    };
    const t: Tally = {
      cases: 0,
      answered: 0,
      noAnswer: 0,
      jsonRpcErrors: 0,
      jsonRpcResults: 0,
      httpLayer: 0,
      parser: 0,
      accepted202: 0,
      injected: 0,
      ledgerWrites: 0,
      signs: 0,
      halts: 0,
      byStatus: {},
      byFamily: {},
    };

    const client = new RawClient(svc.port);
    const check = async (c: FuzzCase): Promise<void> => {
      t.cases++;
      t.byFamily[c.family] = (t.byFamily[c.family] ?? 0) + 1;
      if (pendingSecrets.length > 0)
        recordSecrets(
          SUITE,
          pendingSecrets.splice(0).map((s) => ({ label: 'partial signer', value: s })),
        );
      const before = watch.fingerprint();
      const bytes = requestBytes({
        method: c.method,
        target: c.target,
        headers: c.headers,
        body: c.body,
        contentLength: c.contentLength,
      });
      const res = await client.exchange(bytes, {
        endAfterWrite: c.endAfterWrite,
        fresh: breaksFraming(c),
        noBody: c.method === 'HEAD',
        timeoutMs: 30_000,
      });
      const where = `${c.family} ${c.method} ${c.target} headers=${JSON.stringify(c.headers).slice(0, 400)} body=${JSON.stringify(c.body.toString('utf8').slice(0, 300))}`;
      if (res === null) {
        if (!c.endAfterWrite) throw new Error(`no answer: ${where}`);
        t.noAnswer++;
      } else {
        t.answered++;
        t.byStatus[res.status] = (t.byStatus[res.status] ?? 0) + 1;
        classify(c, res, where);
      }
      const after = watch.fingerprint();
      if (after !== before) {
        const call = toolCallOf(c.body);
        const answered =
          res !== null &&
          res.status === 200 &&
          (JSON.parse(res.body.toString('utf8')) as { result?: unknown }).result !== undefined;
        if (!(call === 'sign' || call === 'halt') || !answered)
          throw new Error(
            `the ledger changed (${before} → ${after}) on ${where}: ${res?.status} ${res?.body.toString('utf8').slice(0, 300)}`,
          );
        t.ledgerWrites++;
        if (call === 'sign') t.signs++;
        else {
          t.halts++;
          // The operator releases the brake (outside the service) so the fuzz keeps reaching the engine.
          for (const h of await w.ledger.listHalts()) await w.engine.resume(h.key);
        }
      }
    };

    const classify = (c: FuzzCase, res: RawResponse, where: string): void => {
      const text = res.body.toString('utf8');
      const status = res.status;
      if (status >= 500 && !c.injectedFault) throw new Error(`HTTP ${status}: ${text.slice(0, 300)} for ${where}`);
      if (text.length < 2000 || toolCallOf(c.body) !== null) artefacts.add('response', `${status} ${text}`);
      if (status === 202) {
        if (text !== '') throw new Error(`202 with a body ${text.slice(0, 200)} for ${where}`);
        t.accepted202++;
        return;
      }
      if (text === '') {
        if (PARSER_STATUSES.has(status) || (c.method === 'HEAD' && HTTP_LAYER_STATUSES.has(status))) {
          t.parser++;
          return;
        }
        throw new Error(`HTTP ${status} with an empty body for ${where}`);
      }
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        throw new Error(`HTTP ${status} with a body that is not JSON: ${text.slice(0, 200)} for ${where}`);
      }
      if ('jsonrpc' in body) {
        if ('error' in body) {
          if (!validators.error(body))
            throw new Error(
              `JSON-RPC error not valid against JSONRPCErrorResponse (${describeErrors(validators.error)}): ${text.slice(0, 300)} for ${where}`,
            );
          const code = (body.error as { code: number }).code;
          if (code === -32603) {
            if (!c.injectedFault)
              throw new Error(
                `an internal error (-32603) without an injected fault: ${text.slice(0, 300)} for ${where}`,
              );
            t.injected++;
          }
          if (!(ENVELOPE_CODES[status] ?? []).includes(code))
            throw new Error(`error code ${code} on HTTP ${status} for ${where}`);
          t.jsonRpcErrors++;
        } else {
          if (!validators.result(body))
            throw new Error(
              `JSON-RPC result not valid against JSONRPCResultResponse (${describeErrors(validators.result)}): ${text.slice(0, 300)} for ${where}`,
            );
          if (status !== 200) throw new Error(`a result on HTTP ${status} for ${where}`);
          t.jsonRpcResults++;
        }
        return;
      }
      if (!HTTP_LAYER_STATUSES.has(status) || typeof body.error !== 'string' || Object.keys(body).length !== 1) {
        throw new Error(
          `HTTP ${status} with a body that is neither JSON-RPC nor the HTTP layer's error: ${text.slice(0, 200)} for ${where}`,
        );
      }
      t.httpLayer++;
    };

    await fc.assert(fc.asyncProperty(fuzzCase(ctx), check), { numRuns: RUNS, endOnFailure: true });
    client.close();

    // Alive and well afterwards: the probe answers and a conforming request still works.
    const health = await fetch(`${svc.url}/health`);
    expect(health.status).toBe(200);
    const metricsText = await svc.scrapeMetrics();
    expect(metricsText).toContain('signer_http_requests_total');

    expect(t.cases).toBe(RUNS);
    // The fuzz reached every layer: the HTTP guard, the envelope, the tools, the engine and the ledger.
    expect(t.httpLayer).toBeGreaterThan(0);
    expect(t.jsonRpcErrors).toBeGreaterThan(0);
    expect(t.jsonRpcResults).toBeGreaterThan(0);
    expect(t.injected).toBeGreaterThan(0);
    if (RUNS >= 5_000) expect(t.signs).toBeGreaterThan(0);
    const { byStatus, byFamily, ...counts } = t;
    recordFigures(SUITE, { ...counts, statuses: JSON.stringify(byStatus), families: Object.keys(byFamily).length });
    console.log(
      `protocol fuzz: ${JSON.stringify(counts)}\nstatuses ${JSON.stringify(byStatus)}\nfamilies ${JSON.stringify(byFamily)}`,
    );
  }, 600_000);
});

/** A case whose bytes could leave the connection out of step (it gets a connection of its own). */
function breaksFraming(c: FuzzCase): boolean {
  if (c.contentLength !== undefined || c.endAfterWrite) return true;
  return c.headers.some(
    ([n, v]) =>
      /[\r\n]/.test(n + v) || /^(transfer-encoding|content-length|connection|upgrade|expect)$/i.test(n.trim()),
  );
}

/** The tool a body calls, when it is a readable tools/call. */
function toolCallOf(body: Buffer): string | null {
  try {
    // The service reads a body with a byte-order mark as JSON (RFC 8259 allows ignoring it), so a sign sent with
    // one is a sign here too.
    const text = body.toString('utf8').replace(/^\uFEFF/, '');
    const b = JSON.parse(text) as { method?: unknown; params?: { name?: unknown } };
    return b.method === 'tools/call' && typeof b.params?.name === 'string' ? b.params.name : null;
  } catch {
    return null;
  }
}
