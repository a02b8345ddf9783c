/**
 * RPC faults: signs through a fault-injecting JSON-RPC proxy in front of the embedded chain, plus
 * the chain's own fault controls. Each fault ends in the outcome docs/reports.md describes — an error before
 * anything is sent; `cluster` for another genesis; `confirmed` when the fee cannot be quoted (the simulated balance
 * change, which includes the fee, bounds the spend) or when the
 * transaction gets through despite the fault; `unknown` after a send that cannot be proven landed — with its
 * intent recorded whenever something may have reached the chain, and nothing sent twice except rebroadcasts of
 * the same bytes (every sendTransaction the proxy saw for one sign carries identical bytes).
 */
import crypto from 'node:crypto';
import { JsonRpcClient } from '../../src/rpc/rpc-client';
import type { Timings } from '../../src/config/types';
import type { AuditEntry } from '../../src/ledger/types';
import { retrySettings } from '../../src/rpc/for-cluster';
import { createEngine } from '../../src/signer/engine';
import type { Report } from '../../src/signer/report';
import { errorMessage, isSignerError } from '../../src/util/errors';
import { keyDirSecrets } from '../support/secrets';
import { ifSetUp } from '../support/set-up';
import { balanceOf, FAST_TIMINGS, makeWorld, type World } from '../support/world';
import { FaultProxy, signatureOf, type FaultRule } from './support/fault-proxy';
import { recordLedgerRows } from './support/ledger-rows';
import { ArtefactBuffer, recordFigures, recordSecrets } from './support/record';

const SUITE = 'rpc-faults';
const TIMINGS: Timings = {
  ...FAST_TIMINGS,
  rpc_timeout_ms: 300,
  poll_interval_ms: 10,
  confirm_deadline_ms: 3_000,
  max_rpc_failures: 60,
  rebroadcast_every: 3,
  metadata_attempts: 3,
  // Each fault is pinned at the engine's level: one failed call is one failure the engine sees. The chain client's
  // own retries of the same faults are proven in test/rpc/resilience.test.ts.
  rpc_retries: 0,
};
const AMOUNT = 1_000_000;

type Expected =
  | { error: RegExp } // the engine stops with an RPC error before sending: no report, no entry
  | { outcome: 'refused'; failed_check: string }
  | { outcome: 'confirmed' | 'unknown'; detail?: RegExp; landed: boolean };

interface Scenario {
  name: string;
  /** Fault kinds it exercises (proxy kinds, or `chain:<control>` for the localnet's own). */
  kinds: string[];
  rules?: FaultRule[];
  /** Drives the chain's controls as calls go by (after the proxy counted them). */
  setup?: (w: World, proxy: FaultProxy) => void;
  timings?: Partial<Timings>;
  expect: Expected;
  /** What else shows the fault was met and handled as specified. */
  also?: (r: Report, proxy: FaultProxy) => void;
}

/** After the first send, move the chain past the blockhash's last valid height (150 blocks) at once. */
const expireAfterSend = (w: World, proxy: FaultProxy): void => {
  let done = false;
  proxy.onCall = (m) => {
    if (m === 'getSignatureStatuses' && proxy.sends.length > 0 && !done) {
      done = true;
      w.localnet.advanceBlocks(200);
    }
  };
};

const SCENARIOS: Scenario[] = [
  // Before anything is sent: an error, no report, nothing in the ledger.
  {
    name: 'getLatestBlockhash never answers',
    kinds: ['timeout'],
    rules: [{ kind: 'timeout', method: 'getLatestBlockhash' }],
    expect: { error: /timed out/ },
  },
  {
    name: 'simulateTransaction answers HTTP 500',
    kinds: ['http500'],
    rules: [{ kind: 'http500', method: 'simulateTransaction' }],
    expect: { error: /HTTP 500/ },
  },
  {
    name: 'getGenesisHash is rate-limited (429)',
    kinds: ['http429'],
    rules: [{ kind: 'http429', method: 'getGenesisHash' }],
    expect: { error: /HTTP 429/ },
  },
  {
    // The key's balance before the simulation is read with getMultipleAccounts pinned to the simulation's slot.
    name: 'the connection drops under the pinned balance read',
    kinds: ['drop'],
    rules: [{ kind: 'drop', method: 'getMultipleAccounts' }],
    expect: { error: /cannot reach|socket hang up|ECONNRESET/ },
  },
  {
    name: 'simulateTransaction answers an HTML page',
    kinds: ['garbage'],
    rules: [{ kind: 'garbage', method: 'simulateTransaction' }],
    expect: { error: /not JSON|not a JSON-RPC object/ },
  },
  {
    name: 'getLatestBlockhash answers half a body',
    kinds: ['truncated'],
    rules: [{ kind: 'truncated', method: 'getLatestBlockhash' }],
    expect: { error: /cannot reach|not JSON|aborted|ECONNRESET|socket hang up/ },
  },
  {
    name: 'the node is unhealthy during simulation',
    kinds: ['rpcError'],
    rules: [{ kind: 'rpcError', method: 'simulateTransaction' }],
    expect: { error: /node error -32005/ },
  },
  {
    name: 'the pinned balance read answers the wrong shape',
    kinds: ['wrongShape'],
    rules: [{ kind: 'wrongShape', method: 'getMultipleAccounts' }],
    expect: { error: /unexpected response/ },
  },
  // Refusals: a report and a final entry, nothing sent.
  {
    name: 'the RPC is on another chain',
    kinds: ['wrongGenesis'],
    rules: [{ kind: 'wrongGenesis', method: 'getGenesisHash' }],
    expect: { outcome: 'refused', failed_check: 'cluster' },
    also: (r) => expect(r.detail).toMatch(/genesis hash \S+ is not local/),
  },
  // Faults the sign rides out: confirmed, intent first.
  {
    name: 'the fee cannot be quoted: the simulated balance change bounds the spend',
    kinds: ['wrongShape'],
    rules: [{ kind: 'wrongShape', method: 'getFeeForMessage' }],
    expect: { outcome: 'confirmed', landed: true },
  },
  {
    name: 'every answer is slow (under the deadline)',
    kinds: ['slow'],
    rules: [{ kind: 'slow', delayMs: 150 }],
    timings: { rpc_timeout_ms: 1_500 },
    expect: { outcome: 'confirmed', landed: true },
  },
  // A read held past the per-call timeout is retried like any other transient failure when retries are on (the
  // service's default): the sign goes on and lands.
  {
    name: 'simulateTransaction is held past the per-call timeout once (retries on): retried, confirmed',
    kinds: ['timeout'],
    rules: [{ kind: 'timeout', method: 'simulateTransaction', times: 1 }],
    timings: { rpc_retries: 3 },
    expect: { outcome: 'confirmed', landed: true },
    also: (_r, p) => expect(p.calls.simulateTransaction).toBeGreaterThanOrEqual(2),
  },
  {
    name: 'the pinned balance read is held past the per-call timeout once (retries on): retried, confirmed',
    kinds: ['timeout'],
    rules: [{ kind: 'timeout', method: 'getMultipleAccounts', times: 1 }],
    timings: { rpc_retries: 3 },
    expect: { outcome: 'confirmed', landed: true },
  },
  {
    name: 'the first send is lost; a rebroadcast lands',
    kinds: ['loseSend'],
    rules: [{ kind: 'loseSend', method: 'sendTransaction', times: 1 }],
    expect: { outcome: 'confirmed', landed: true },
    also: (_r, p) => expect(p.sends.length).toBeGreaterThanOrEqual(2),
  },
  {
    name: 'the send reaches the node but its answer is lost',
    kinds: ['forwardThenDrop'],
    rules: [{ kind: 'forwardThenDrop', method: 'sendTransaction', times: 1 }],
    expect: { outcome: 'confirmed', landed: true },
  },
  {
    name: 'the send answers HTTP 500; a rebroadcast lands',
    kinds: ['http500'],
    rules: [{ kind: 'http500', method: 'sendTransaction', times: 1 }],
    expect: { outcome: 'confirmed', landed: true },
    also: (_r, p) => expect(p.sends.length).toBeGreaterThanOrEqual(2),
  },
  {
    name: 'the send times out; a rebroadcast lands',
    kinds: ['timeout'],
    rules: [{ kind: 'timeout', method: 'sendTransaction', times: 1 }],
    expect: { outcome: 'confirmed', landed: true },
    also: (_r, p) => expect(p.sends.length).toBeGreaterThanOrEqual(2),
  },
  {
    name: 'status polls fail for a while',
    kinds: ['chain:failNext'],
    setup: (w) => w.localnet.faults.failNext(5, 'getSignatureStatuses'),
    expect: { outcome: 'confirmed', landed: true },
  },
  {
    name: 'the metadata never comes',
    kinds: ['http500'],
    rules: [{ kind: 'http500', method: 'getTransaction' }],
    expect: { outcome: 'confirmed', landed: true },
    also: (r, p) => {
      // Without metadata the change is unknown, so the intent's reservation is what counts against the cap.
      expect(r.balance_change).toBeNull();
      expect(p.calls.getTransaction).toBe(TIMINGS.metadata_attempts);
    },
  },
  {
    name: 'the blockhash expires before simulation: re-signed once',
    kinds: ['chain:expireAllBlockhashes'],
    setup: (w, p) => {
      let done = false;
      p.onCall = (m) => {
        if (m === 'simulateTransaction' && !done) {
          done = true;
          w.localnet.faults.expireAllBlockhashes();
        }
      };
    },
    expect: { outcome: 'confirmed', landed: true },
    also: (_r, p) => expect(p.calls.simulateTransaction).toBe(2),
  },
  // Sent but not provably landed: unknown, the intent stays charged.
  {
    name: 'every send is lost',
    kinds: ['loseSend'],
    rules: [{ kind: 'loseSend', method: 'sendTransaction' }],
    setup: expireAfterSend,
    expect: { outcome: 'unknown', detail: /blockhash expired/, landed: false },
  },
  {
    name: 'the chain drops every send',
    kinds: ['chain:dropSends'],
    setup: (w, p) => {
      w.localnet.faults.dropSends(true);
      expireAfterSend(w, p);
    },
    expect: { outcome: 'unknown', detail: /blockhash expired/, landed: false },
  },
  {
    name: 'statuses never come (it landed)',
    kinds: ['nullStatuses'],
    rules: [{ kind: 'nullStatuses', method: 'getSignatureStatuses' }],
    setup: expireAfterSend,
    expect: { outcome: 'unknown', detail: /blockhash expired/, landed: true },
  },
  {
    name: 'confirmation stalls at processed',
    kinds: ['chain:stallConfirmations'],
    setup: (w, p) => {
      w.localnet.faults.stallConfirmations(true);
      expireAfterSend(w, p);
    },
    expect: { outcome: 'unknown', detail: /blockhash expired/, landed: true },
  },
  {
    name: 'the cluster stops producing blocks',
    kinds: ['chain:freezeHeight'],
    setup: (w) => w.localnet.faults.freezeHeight(true),
    timings: { confirm_deadline_ms: 1_500 },
    expect: { outcome: 'unknown', detail: /no proven outcome within 1.5s/, landed: true },
  },
  {
    name: 'status polls fail every time',
    kinds: ['rpcError'],
    rules: [{ kind: 'rpcError', method: 'getSignatureStatuses' }],
    expect: { outcome: 'unknown', detail: /Node is unhealthy; look up the signature/, landed: true },
  },
  {
    name: 'status polls time out every time',
    kinds: ['timeout'],
    rules: [{ kind: 'timeout', method: 'getSignatureStatuses' }],
    timings: { max_rpc_failures: 4 },
    expect: { outcome: 'unknown', detail: /timed out.*look up the signature/, landed: true },
  },
  {
    name: 'status polls answer half a body every time',
    kinds: ['truncated'],
    rules: [{ kind: 'truncated', method: 'getSignatureStatuses' }],
    expect: { outcome: 'unknown', detail: /look up the signature/, landed: true },
  },
];

describe('RPC faults between the engine and the chain', () => {
  let w: World;
  let proxy: FaultProxy;
  let rpcUrl: string;
  const artefacts = new ArtefactBuffer(SUITE);
  const kindsSeen = new Set<string>();
  let sentSigns = 0;

  beforeAll(async () => {
    proxy = await FaultProxy.start();
    // A provider URL carries credentials: they must never show in an error, a report or a log.
    const apiKey = crypto.randomBytes(24).toString('hex');
    const password = `rpc-pass-${crypto.randomBytes(12).toString('hex')}`;
    recordSecrets(SUITE, [
      { label: 'RPC API key', value: apiKey },
      { label: 'RPC password', value: password },
    ]);
    rpcUrl = proxy.url({ user: 'signer', password, path: `/v2/${apiKey}?api-key=${apiKey}` });
    w = await makeWorld({ blockIntervalMs: 20, rpcUrl: (url) => (proxy.setTarget(url), rpcUrl) });
    recordSecrets(
      SUITE,
      keyDirSecrets(w.config.key_dir).map((s, i) => ({ label: `key file ${i}`, value: s })),
    );
  });

  afterAll(async () => {
    artefacts.flush();
    const world = ifSetUp(w);
    if (world) recordLedgerRows((world.config.ledger as { path: string }).path, SUITE);
    recordFigures(SUITE, {
      fault_kinds: kindsSeen.size,
      kinds: [...kindsSeen].sort().join(' '),
      scenarios: SCENARIOS.length,
      sent_signs: sentSigns,
    });
    await ifSetUp(proxy)?.close();
    await world?.close();
  });

  afterEach(() => {
    proxy.reset();
    w.localnet.faults.clear();
  });

  async function entriesSince(count: number): Promise<AuditEntry[]> {
    const all = await w.ledger.tail(1_000_000);
    return all.slice(count);
  }

  it.each(SCENARIOS.map((s, i) => [s.name, s, i] as const))('%s', async (_name, s, i) => {
    // An amount of its own: the same transfer on the same blockhash would be the same transaction (AlreadyProcessed).
    const amount = AMOUNT + i;
    // A fresh client per scenario: the transport's batching (and its fallback) must not carry over.
    const timings = { ...TIMINGS, ...s.timings };
    const engine = createEngine({
      config: { ...w.config, timings },
      chain: new JsonRpcClient(rpcUrl, { timeoutMs: timings.rpc_timeout_ms, retry: retrySettings(timings) }),
      ledger: w.ledger,
    });
    const before = (await w.ledger.tail(1_000_000)).length;
    const destination = w.keys.alpha!.destination;
    const destBefore = await balanceOf(w, destination).catch(() => 0);
    for (const r of s.rules ?? []) proxy.add(r);
    s.setup?.(w, proxy);

    let report: Report | null = null;
    let error: unknown = null;
    try {
      report = await engine.sign({
        payload: w.transfer('alpha', amount, `fault: ${s.name}`),
        key: null,
        intent: s.name,
        principal: w.operator,
      });
      artefacts.add('report', JSON.stringify(report));
    } catch (e) {
      error = e;
      artefacts.add('error', errorMessage(e));
    }
    // Faults off before looking at the chain (a frozen or stalled chain must move again).
    proxy.clear();
    proxy.onCall = null;
    w.localnet.faults.clear();
    const added = await entriesSince(before);
    const sends = [...proxy.sends];
    const seen = { sends, calls: { ...proxy.calls } } as unknown as FaultProxy;
    for (const k of s.kinds) kindsSeen.add(k);

    // Nothing is sent twice except rebroadcasts of the same bytes.
    expect(new Set(sends).size).toBeLessThanOrEqual(1);

    if ('error' in s.expect) {
      expect(report).toBeNull();
      expect(isSignerError(error)).toBe(true);
      expect((error as Error).message).toMatch(s.expect.error);
      expect(sends).toHaveLength(0);
      expect(added).toHaveLength(0);
      return;
    }
    if (error instanceof Error) throw error;
    expect(error).toBeNull();
    expect(report).not.toBeNull();
    const r = report!;
    if (r.outcome !== s.expect.outcome)
      throw new Error(`outcome ${r.outcome} (${r.detail}); expected ${s.expect.outcome}`);

    s.also?.(r, seen);
    if (s.expect.outcome === 'refused') {
      expect(r.failed_check).toBe(s.expect.failed_check);
      expect(sends).toHaveLength(0);
      expect(added.map((e) => e.command)).toEqual(['sign']);
      return;
    }

    // Something was sent: the intent came first, with the transaction's signature and a charge, then the final.
    sentSigns++;
    expect(sends.length).toBeGreaterThan(0);
    const signature = signatureOf(sends[0]!);
    expect(r.signature).toBe(signature);
    expect(added.map((e) => e.command)).toEqual(['sign-intent', 'sign']);
    const [intent, final] = added as [AuditEntry, AuditEntry];
    expect(intent).toMatchObject({ outcome: 'pending', signature });
    expect(intent.balance_change).toBeLessThan(-amount);
    expect(final).toMatchObject({ outcome: r.outcome, signature });
    if (s.expect.detail) expect(r.detail).toMatch(s.expect.detail);

    // Whether it landed is the chain's word, not the report's: wait for it to settle when it should land.
    let landed: boolean;
    const deadline = Date.now() + 3_000;
    do {
      landed = (await balanceOf(w, destination).catch(() => 0)) - destBefore === amount;
      if (landed || !s.expect.landed) break;
      await new Promise((res) => setTimeout(res, 50));
    } while (Date.now() < deadline);
    expect(landed).toBe(s.expect.landed);
    if (s.expect.outcome === 'confirmed') expect(r.slot).not.toBeNull();
    if (s.expect.outcome === 'unknown') {
      // The reservation stays charged against the cap: the key's usage counts at least the intent.
      const [view] = await w.engine.keyShow({ key: 'alpha', principal: w.operator });
      expect(view!.spent_or_reserved_24h).toBeGreaterThanOrEqual(-intent.balance_change!);
    }
  });
});
