/**
 * A sign-only reservation is released only on proof (issue: a landed x402 payment recorded as `signed_expired`).
 * An agent that controls the fee payer sends the payment together with a thousand cheap transactions that name the
 * key read-only, all in one block, on the real embedded chain: the watcher must still find the payment (it lands
 * `confirmed` with its real figures and the cap refuses the next one), an expired payment that truly never
 * landed must still release its reservation, and a watcher that cannot read the key's history must end `unknown`
 * with an alert, never `signed_expired`. The RPC cost of each poll is bounded and measured.
 */
import {
  AccountRole,
  address,
  createSolanaRpc,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  getTransactionDecoder,
  partiallySignTransaction,
  type Instruction,
  type KeyPairSigner,
  type Transaction,
} from '@solana/kit';
import { openEngine } from '../../src/signer';
import type { EngineAlert } from '../../src/signer/engine-deps';
import { SCAN_BUDGET_PER_POLL } from '../../src/signer/flow/key-history';
import type { Report } from '../../src/signer/report';
import type { SignerEngine } from '../../src/signer/types';
import { finalEntry, until } from '../support/async';
import { randomAddress } from '../support/payloads';
import { makeWorld, type World } from '../support/world';
import { fundedSigner, latestLifetime, transfer, wireTransaction, type Rpc } from './kit-transactions';

const SOL = 1_000_000_000;
const CAP = SOL;
const PAYMENT = (6 * SOL) / 10;
const FLOOD = 1_000;

let w: World;
let rpc: Rpc;
let key: World['keys'][string];
let facilitator: KeyPairSigner;
let sink: string;
const alerts: EngineAlert[] = [];
const pollCosts: { listings: number; reads: number }[] = [];
let engine: SignerEngine;

beforeAll(async () => {
  w = await makeWorld({ keys: { alpha: { daily_lamport_cap: CAP } } });
  rpc = createSolanaRpc(w.localnet.url);
  key = w.keys.alpha!;
  facilitator = await fundedSigner((a, l) => w.localnet.airdrop(a, l), 100 * SOL);
  w.localnet.airdrop(key.destination, SOL);
  sink = randomAddress();
  w.localnet.airdrop(sink, SOL);
  // An engine of its own, so its watcher reports what each poll cost and what it raised.
  engine = await openEngine(w.config, {
    observer: { alert: (a) => alerts.push(a), watchPoll: (c) => pollCosts.push(c) },
  });
});

afterAll(async () => {
  await engine.close();
  await w.close();
});

const v2 = (transaction: string) => ({ version: 2, transaction, summary: 'an x402 payment', warnings: [] });
const decode = (base64: string): Transaction => getTransactionDecoder().decode(Buffer.from(base64, 'base64'));

/** A System transfer `from` must sign, with no kit signer attached (its slot stays empty). */
function signedBy(from: string, to: string, lamports: number): Instruction {
  const ix = transfer(address(from), to, lamports);
  const accounts = (ix.accounts ?? []).map((a, i) => (i === 0 ? { ...a, role: AccountRole.WRITABLE_SIGNER } : a));
  return { ...ix, accounts };
}

async function payment(lamports: number): Promise<string> {
  return wireTransaction(facilitator.address, [signedBy(key.pubkey, key.destination, lamports)], {
    lifetime: await latestLifetime(rpc),
  });
}

const signOnly = (tx: string): Promise<Report> =>
  engine.sign({ payload: v2(tx), key: 'alpha', mode: 'sign_only', principal: w.operator });

/** What the facilitator does with the signer's bytes: adds its signature and sends; the id is its signature. */
async function facilitatorSends(signedByKey: string): Promise<string> {
  const tx = await partiallySignTransaction([facilitator.keyPair], decode(signedByKey));
  await rpc.sendTransaction(getBase64EncodedWireTransaction(tx), { encoding: 'base64' }).send();
  return getSignatureFromTransaction(tx);
}

/** `n` cheap transactions of the fee payer's own that list the key as a read-only account. */
async function flood(n: number): Promise<void> {
  const lifetime = await latestLifetime(rpc);
  const wires: string[] = [];
  for (let i = 0; i < n; i++) {
    const ix = transfer(facilitator, sink, 1 + i);
    const withKey = {
      ...ix,
      accounts: [...(ix.accounts ?? []), { address: address(key.pubkey), role: AccountRole.READONLY }],
    };
    wires.push(await wireTransaction(facilitator.address, [withKey], { lifetime }));
  }
  for (let at = 0; at < wires.length; at += 50) {
    await Promise.all(
      wires.slice(at, at + 50).map((wire) => rpc.sendTransaction(wire as never, { encoding: 'base64' }).send()),
    );
  }
}

const finalOf = (signature: string, timeoutMs = 30_000) => finalEntry(w.ledger, signature, timeoutMs);

async function spent(): Promise<number> {
  const [view] = await engine.keyShow({ key: 'alpha', principal: w.operator });
  return view!.spent_or_reserved_24h;
}

async function keyHistoryLength(): Promise<number> {
  let n = 0;
  let before: string | undefined;
  for (;;) {
    const page = await rpc
      .getSignaturesForAddress(address(key.pubkey), {
        limit: 1000,
        commitment: 'confirmed',
        ...(before === undefined ? {} : { before: before as never }),
      })
      .send();
    n += page.length;
    if (page.length < 1000) return n;
    before = page[page.length - 1]!.signature;
  }
}

describe('a payment hidden under a flood of transactions naming the key', () => {
  it('ends confirmed with its real figures, and the cap refuses the next payment of the same size', async () => {
    const report = await signOnly(await payment(PAYMENT));
    expect(report).toMatchObject({ outcome: 'signed', balance_change: -PAYMENT });
    expect(await spent()).toBe(PAYMENT);

    // One block: the chain makes no block until the payment and the whole flood are in.
    w.localnet.faults.freezeHeight(true);
    let id: string;
    const readsBefore = w.localnet.stats().calls.getTransaction ?? 0;
    try {
      id = await facilitatorSends(report.signed_transaction!);
      await flood(FLOOD);
    } finally {
      w.localnet.faults.freezeHeight(false);
    }
    // The block holding them is confirmed some time after the chain moves again: wait for it, then count.
    await until(async () => (await keyHistoryLength()) > FLOOD, 'the flood in the key history at confirmed');
    expect(await keyHistoryLength()).toBeGreaterThan(FLOOD);

    const final = await finalOf(report.signature!);
    expect(final).toMatchObject({ outcome: 'confirmed', balance_change: -PAYMENT });
    expect(final.detail).toContain(`landed as ${id}`);
    expect(await spent()).toBe(PAYMENT);

    // The next payment of the same size would take the key past its 1 SOL cap.
    const next = await signOnly(await payment(PAYMENT));
    expect(next).toMatchObject({ outcome: 'refused', failed_check: 'limits', reason: 'per_day_cap' });

    // Bounded per poll, whatever the flood: at most the budget of listings and reads.
    const worst = pollCosts.reduce(
      (m, c) => ({ listings: Math.max(m.listings, c.listings), reads: Math.max(m.reads, c.reads) }),
      {
        listings: 0,
        reads: 0,
      },
    );
    expect(worst.listings).toBeLessThanOrEqual(SCAN_BUDGET_PER_POLL.listings);
    expect(worst.reads).toBeLessThanOrEqual(SCAN_BUDGET_PER_POLL.reads);
    const reads = (w.localnet.stats().calls.getTransaction ?? 0) - readsBefore;
    // Each transaction of the flood read about once, not once per poll.
    expect(reads).toBeLessThan(FLOOD * 1.2);
    process.stdout.write(
      `watch flood: ${FLOOD} transactions; ${pollCosts.filter((c) => c.reads > 0).length} polls read; worst poll ${worst.listings} listings, ${worst.reads} reads; ${reads} getTransaction calls\n`,
    );
  });

  it('an expired payment that truly never landed, under another flood, still releases its reservation', async () => {
    const base = await spent();
    const report = await signOnly(await payment(SOL / 10));
    expect(report.outcome).toBe('signed');
    expect(await spent()).toBe(base + SOL / 10);
    w.localnet.faults.freezeHeight(true);
    try {
      await flood(300);
    } finally {
      w.localnet.faults.freezeHeight(false);
    }
    w.localnet.advanceBlocks(200);
    const final = await finalOf(report.signature!);
    expect(final.outcome).toBe('signed_expired');
    expect(final.detail).toMatch(/every transaction of the key since slot \d+ was examined/);
    expect(await spent()).toBe(base);
  });

  it('a watcher that cannot read the key history ends unknown, keeps the reservation and raises an alert', async () => {
    const short = await openEngine(
      { ...w.config, timings: { ...w.config.timings, confirm_deadline_ms: 300 } },
      { observer: { alert: (a) => alerts.push(a), watchPoll: () => {} } },
    );
    try {
      const base = await spent();
      const report = await short.sign({
        payload: v2(await payment(SOL / 20)),
        key: 'alpha',
        mode: 'sign_only',
        principal: w.operator,
      });
      expect(report.outcome).toBe('signed');
      w.localnet.faults.failNext(1_000_000, 'getSignaturesForAddress');
      w.localnet.advanceBlocks(200);
      const final = await finalOf(report.signature!);
      expect(final.outcome).toBe('unknown');
      expect(final.detail).toMatch(/whether it landed is not proven, so its reservation stays/);
      expect(await spent()).toBe(base + SOL / 20);
      // The alert follows the final entry, which other readers see as soon as it is committed.
      await until(
        () => alerts.some((a) => a.kind === 'watch_unresolved' && a.signature === report.signature),
        'the watch_unresolved alert',
      );
      expect(alerts).toContainEqual(
        expect.objectContaining({ kind: 'watch_unresolved', key: 'alpha', signature: report.signature }),
      );
    } finally {
      w.localnet.faults.clear();
      await short.close();
    }
  });
});
