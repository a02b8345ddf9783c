/**
 * No request holds the event loop: the largest hostile payloads a body limit lets through (11,000 partial
 * signers, half a million data bytes, tens of thousands of accounts or instructions, a megabyte of summary or
 * warnings, unknown fields the hash would walk) go over real HTTP to the live service as `check` and `sign`, from
 * a token granted the key, one granted another key, and none. The service runs in this process so its event loop
 * is measured directly (perf_hooks.monitorEventLoopDelay at 1 ms resolution); each request's bodies are built
 * before measuring starts, so the figure is the service's work.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { SYSTEM_PROGRAM } from '../../src/solana/programs';
import { keypair, payload, randomAddress, transferInstruction, type PayloadInstruction } from '../support/payloads';
import { keyDirSecrets } from '../support/secrets';
import { makeWorld, type World } from '../support/world';
import { closeAgent, post, toolCall, type HttpAnswer } from './support/mcp-client';
import { recordFigures, recordSecrets } from './support/record';
import { issueTokens, serveInProcess, type InProcessService } from './support/service';

const SUITE = 'event-loop';
const MAX_DELAY_MS = 50;
// The shipped default: it bounds how long parsing a hostile body can hold the event loop.
const BODY_LIMIT = 65_536;

interface HostileCase {
  name: string;
  payload: Record<string, unknown>;
  /** JSON text that replaces the string RAW in the body (for values JSON.stringify cannot build, e.g. deep nesting). */
  raw?: string;
}

const RAW = '__raw__';
const ATTEMPTS = 3;

interface Request {
  label: string;
  body: Buffer;
  headers: Record<string, string>;
}

interface Measured {
  label: string;
  maxMs: number;
  status: number;
  text: string;
}

/** The largest count of `item` whose payload still fits the body limit with room for the envelope. */
function fill(make: (n: number) => Record<string, unknown>, perItemBytes: number): Record<string, unknown> {
  return make(Math.floor((BODY_LIMIT - 4096) / perItemBytes));
}

function hostileCases(feePayer: string, destination: string): { cases: HostileCase[]; secrets: string[] } {
  const partial = keypair();
  const base = () => payload(feePayer, [transferInstruction(feePayer, destination, 1_000)]);
  const meta = { pubkey: feePayer, is_signer: true, is_writable: true };
  const bare: PayloadInstruction = { program_id: SYSTEM_PROGRAM, accounts: [], data: [] };
  const depth = Math.floor((BODY_LIMIT - 4096) / 2);
  const cases: HostileCase[] = [
    {
      name: 'partial signers',
      payload: fill((n) => ({ ...base(), partial_signers: new Array<string>(n).fill(partial.base64) }), 91),
    },
    {
      name: 'data bytes',
      payload: fill((n) => payload(feePayer, [{ ...bare, data: new Array<number>(n).fill(7) }]), 2),
    },
    {
      name: 'accounts',
      payload: fill((n) => payload(feePayer, [{ ...bare, accounts: new Array<typeof meta>(n).fill(meta) }]), 100),
    },
    { name: 'instructions', payload: fill((n) => payload(feePayer, new Array<PayloadInstruction>(n).fill(bare)), 80) },
    { name: 'summary', payload: fill((n) => ({ ...base(), summary: 's'.repeat(n) }), 1) },
    { name: 'warnings', payload: fill((n) => ({ ...base(), warnings: new Array<string>(n).fill('w') }), 4) },
    { name: 'unknown field', payload: fill((n) => ({ ...base(), padding: new Array<number>(n).fill(0) }), 2) },
    { name: 'nesting', payload: { ...base(), padding: RAW }, raw: '['.repeat(depth) + ']'.repeat(depth) },
    { name: 'fee payer text', payload: fill((n) => payload('1'.repeat(n), []), 1) },
    {
      // Within every bound: the most a payload may carry all reaches the checks and the simulation.
      name: 'largest accepted shape',
      payload: payload(feePayer, [
        {
          program_id: SYSTEM_PROGRAM,
          accounts: Array.from({ length: 10 }, () => ({
            pubkey: randomAddress(),
            is_signer: false,
            is_writable: true,
          })),
          data: new Array<number>(900).fill(1),
        },
      ]),
    },
    {
      name: 'ten partial signers',
      payload: {
        ...payload(feePayer, [
          {
            program_id: SYSTEM_PROGRAM,
            accounts: Array.from({ length: 10 }, (_, i) => ({
              pubkey: i === 0 ? partial.pubkey : randomAddress(),
              is_signer: true,
              is_writable: true,
            })),
            data: [2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0],
          },
        ]),
        partial_signers: new Array<string>(10).fill(partial.base64),
      },
    },
  ];
  return { cases, secrets: [partial.base64] };
}

describe('no request from any token holds the event loop', () => {
  let w: World;
  let svc: InProcessService;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    w = await makeWorld({ keys: { alpha: { rate_limit_per_minute: 1_000_000 }, bravo: {} } });
    recordSecrets(
      SUITE,
      keyDirSecrets(w.config.key_dir).map((s, i) => ({ label: `key file ${i}`, value: s })),
    );
    const issued = issueTokens(SUITE, [
      { name: 'agent', keys: ['alpha'] },
      { name: 'stranger', keys: ['bravo'] },
    ]);
    for (const t of issued.tokens) tokens[t.name] = t.token;
    svc = await serveInProcess({
      suite: SUITE,
      config: w.config,
      engine: w.engine,
      tokens: issued.config,
      serve: { rate_limit_per_minute: 100_000, body_limit_bytes: BODY_LIMIT },
      logLevel: 'warn',
    });
  });

  afterAll(async () => {
    closeAgent();
    await svc.close();
    await w.close();
  });

  /** Bodies for every case × caller × tool, built before anything is measured. */
  function requestsFor(cases: HostileCase[]): Request[] {
    const callers: { who: string; token: string }[] = [
      { who: 'granted token', token: tokens.agent! },
      { who: 'token for another key', token: tokens.stranger! },
      { who: 'no token', token: 'not-a-token' },
    ];
    const out: Request[] = [];
    for (const c of cases) {
      for (const caller of callers) {
        for (const tool of ['check', 'sign'] as const) {
          const spec = toolCall(tool, { payload: c.payload, key: 'alpha' }, caller.token);
          const text = JSON.stringify(spec.body);
          const body = Buffer.from(c.raw === undefined ? text : text.replace(JSON.stringify(RAW), c.raw));
          expect(body.length).toBeLessThanOrEqual(BODY_LIMIT);
          out.push({ label: `${c.name} / ${tool} / ${caller.who}`, body, headers: spec.headers });
        }
      }
    }
    return out;
  }

  /**
   * Each request's event-loop delay while it is served. The machine is shared, so a request is tried up to
   * ATTEMPTS times and its best attempt kept: a block the request causes shows in every attempt, a pause of the
   * machine does not.
   */
  async function measure(requests: Request[]): Promise<Measured[]> {
    await post(`${svc.url}/mcp`, requests[0]!.body, requests[0]!.headers); // warm the path once
    const out: Measured[] = [];
    for (const r of requests) {
      let best: Measured | null = null;
      for (let attempt = 0; attempt < ATTEMPTS && (best === null || best.maxMs >= MAX_DELAY_MS); attempt++) {
        const h = monitorEventLoopDelay({ resolution: 1 });
        h.enable();
        const answer: HttpAnswer = await post(`${svc.url}/mcp`, r.body, r.headers);
        // One more sample after the answer, so work done after the response is counted too.
        await new Promise((resolve) => setTimeout(resolve, 5));
        h.disable();
        const m = { label: r.label, maxMs: h.max / 1e6, status: answer.status, text: answer.text };
        if (best === null || m.maxMs < best.maxMs) best = m;
      }
      out.push(best!);
    }
    if (process.env.EVENT_LOOP_DEBUG)
      console.log(out.map((p) => `${p.maxMs.toFixed(1)} ms ${p.status} ${p.label}`).join('\n'));
    return out;
  }

  it(`every hostile payload is answered without an event-loop delay of ${MAX_DELAY_MS} ms or more`, async () => {
    const alpha = w.keys.alpha!;
    const { cases, secrets } = hostileCases(alpha.pubkey, alpha.destination);
    recordSecrets(
      SUITE,
      secrets.map((value) => ({ label: 'partial signer', value })),
    );
    const measured = await measure(requestsFor(cases.filter((c) => c.raw === undefined)));

    const fiveXX = measured.filter((p) => p.status >= 500);
    const worst = Math.max(...measured.map((p) => p.maxMs));
    recordFigures(SUITE, {
      requests: measured.length,
      status_5xx: fiveXX.length,
      event_loop_max_ms: Math.round(worst * 10) / 10,
    });
    expect(measured.map((p) => p.status).filter((s) => s === 0 || s >= 500)).toEqual([]);
    expect(measured.filter((p) => p.maxMs >= MAX_DELAY_MS)).toEqual([]);
    // Nothing was sent: every hostile payload ended as an error or a refusal.
    expect(w.localnet.stats().sends).toBe(0);
  }, 300_000);

  // Deep nesting is refused by the payload bounds, but the body is JSON.parse'd whole first: the body limit is what
  // bounds that parse (half a million levels in 1 MiB cost it 100–300 ms here; 64 KiB holds a fraction of that).
  it('deep nesting in a payload is refused as too deep, without a 5xx or a long parse', async () => {
    const alpha = w.keys.alpha!;
    const nesting = hostileCases(alpha.pubkey, alpha.destination).cases.filter((c) => c.raw !== undefined);
    const measured = await measure(requestsFor(nesting).filter((r) => !r.label.endsWith('no token')));
    for (const m of measured) {
      expect([200, 413]).toContain(m.status);
      if (m.status === 200) expect(m.text).toContain('payload nests deeper than 16 levels');
    }
    recordFigures(`${SUITE}-nesting`, {
      requests: measured.length,
      event_loop_max_ms: Math.round(Math.max(...measured.map((p) => p.maxMs)) * 10) / 10,
    });
    expect(measured.filter((p) => p.maxMs >= MAX_DELAY_MS)).toEqual([]);
  }, 300_000);
});
