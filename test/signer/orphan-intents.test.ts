/**
 * Sent transactions whose signer stopped before writing their final entry. The intents here are written by the
 * test into a ledger of their own, with times in the past: they stand in for a signer killed while confirming, or
 * one whose final entry the ledger refused. The transactions are real (signed by the key, sent to LiteSVM behind its
 * JSON-RPC endpoint, or never sent), and an engine opened on that ledger must end each one as the sign would have.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  address,
  createSolanaRpc,
  getBase64EncodedWireTransaction,
  getTransactionDecoder,
  type Signature,
} from '@solana/kit';
import { openEngine, type SignerEngine } from '../../src/signer';
import { openLedger } from '../../src/ledger/open';
import type { AuditEntry, Ledger } from '../../src/ledger/types';
import { signEntry } from '../../src/signer/flow/audit';
import { intentWatch, orphanAfterMs, pendingIntents, sentIntentDetail } from '../../src/signer/flow/intent-watch';
import { encodeBase58 } from '../../src/util/base58';
import { nowSeconds } from '../../src/util/time';
import { finalEntry } from '../support/async';
import { makeWorld, type World } from '../support/world';
import { latestLifetime, transfer, waitConfirmed, wireTransaction, type Lifetime, type Rpc } from './kit-transactions';
import { spentLamports } from '../../src/signer/policy/rules/daily-cap';

const FEE = 5000;
const HOUR = 3600;

let w: World;
let rpc: Rpc;
let key: World['keys'][string];

beforeAll(async () => {
  w = await makeWorld({ keys: { alpha: {} } });
  rpc = createSolanaRpc(w.localnet.url);
  key = w.keys.alpha!;
});

afterAll(async () => {
  await w.close();
});

/** A sent transaction's intent as the gate writes it, `ago` seconds old. */
function sentIntent(signature: string, lastValid: number, lamports: number, ago: number) {
  const rec = { key: w.config.keys[0]!, payloadHash: 'f'.repeat(64), summary: 'orphan', programs: [], intent: null };
  return {
    ...signEntry(rec, {
      command: 'sign-intent',
      outcome: 'pending',
      detail: sentIntentDetail(lastValid),
      watch: intentWatch('send', lastValid, null),
      signature,
      slot: null,
      balance_change: -(lamports + FEE),
      tokens: null,
    }),
    ts: nowSeconds() - ago,
  };
}

/** Bytes the key signed and nobody will send: their signature is real and never lands. */
const neverSent = (): string => encodeBase58(crypto.randomBytes(64));

/** A transfer of the key signed by `engine` with mode sign_only, then sent to the chain by the test: its signature. */
async function signOnlyAndSend(engine: SignerEngine, lamports: number, lifetime: Lifetime): Promise<Signature> {
  const tx = await wireTransaction(key.pubkey, [transfer(address(key.pubkey), key.destination, lamports)], {
    lifetime,
  });
  const signed = await engine.sign({
    payload: { version: 2, transaction: tx, summary: 'orphan', warnings: [] },
    mode: 'sign_only',
    principal: w.operator,
  });
  expect(signed.outcome).toBe('signed');
  const wire = getTransactionDecoder().decode(Buffer.from(signed.signed_transaction!, 'base64'));
  return rpc.sendTransaction(getBase64EncodedWireTransaction(wire), { encoding: 'base64' }).send();
}

async function finalsOf(ledger: Ledger, signature: string): Promise<AuditEntry[]> {
  const out: AuditEntry[] = [];
  for await (const e of ledger.entries()) if (e.signature === signature && e.command === 'sign') out.push(e);
  return out;
}

describe('intents of sent transactions with no final entry', () => {
  let ledger: Ledger;
  let engine: SignerEngine | null = null;

  beforeAll(async () => {
    fs.mkdirSync(path.join(w.dir, 'orphans'), { recursive: true });
    ledger = await openLedger({ store: 'sqlite', path: path.join(w.dir, 'orphans', 'ledger.sqlite') });
  });

  afterAll(async () => {
    await engine?.close();
    await ledger.close();
  });

  it('an engine that starts ends old ones as the sign would have, and leaves a recent one to its sign', async () => {
    // A transfer the key signed and that landed, its final entry never written.
    const lifetime = await latestLifetime(rpc);
    const sent = await signOnlyAndSend(w.engine, 1_000_000, lifetime);
    await waitConfirmed(rpc, sent);
    const lastValid = Number(lifetime.lastValidBlockHeight);

    const height = Number(await rpc.getBlockHeight({ commitment: 'finalized' }).send());
    const landed = sentIntent(sent, lastValid, 1_000_000, HOUR);
    const lost = sentIntent(neverSent(), height - 1, 9000, HOUR);
    // Past its blockhash too, but young enough that the sign that wrote it may still be confirming it.
    const recent = sentIntent(neverSent(), height - 1, 11_000, 5);
    // From before intents named their last valid height: nothing to tell its expiry by.
    const legacy = { ...sentIntent(neverSent(), height - 1, 13_000, HOUR), detail: null, watch: null };
    // The watcher goes through them in this order: the two left alone come before the last one ended.
    for (const e of [landed, recent, legacy, lost]) await ledger.append(e);

    engine = await openEngine({
      ...w.config,
      state_dir: path.join(w.dir, 'orphans'),
      ledger: { store: 'sqlite', path: path.join(w.dir, 'orphans', 'ledger.sqlite') },
    });

    const confirmed = await finalEntry(ledger, sent);
    expect(confirmed).toMatchObject({ outcome: 'confirmed', key: 'alpha', balance_change: -(1_000_000 + FEE) });
    expect(confirmed.slot).toEqual(expect.any(Number));
    expect(confirmed.detail).toMatch(/the signer stopped before writing the final entry.*it landed$/);

    const unknown = await finalEntry(ledger, lost.signature!);
    expect(unknown.outcome).toBe('unknown');
    expect(unknown.detail).toMatch(/blockhash expired .* its reservation stays/);
    // `unknown` keeps the reservation; the landed one counts what it spent: the cap sees both.
    const usage = await ledger.keyUsage('alpha', nowSeconds());
    expect(spentLamports(usage, w.config.keys[0]!.daily_lamport_cap)).toBe(
      1_000_000 + FEE + 9000 + FEE + 11_000 + FEE + 13_000 + FEE,
    );

    // The poll that ended `lost` had looked at these two first, and left them alone.
    expect(await finalsOf(ledger, recent.signature!)).toEqual([]);
    expect(await finalsOf(ledger, legacy.signature!)).toEqual([]);
  });

  it('an engine already running ends one another process leaves after its start (a replica killed, a failover)', async () => {
    const sweeping = await openEngine({
      ...w.config,
      timings: { ...w.config.timings, orphan_sweep_ms: 50 },
      state_dir: path.join(w.dir, 'orphans-later'),
      ledger: { store: 'sqlite', path: path.join(w.dir, 'orphans', 'ledger.sqlite') },
    });
    try {
      // Written once the engine runs, as the replica that died would have: the start's look cannot have seen it.
      const lifetime = await latestLifetime(rpc);
      const sent = await signOnlyAndSend(w.engine, 1_500_000, lifetime);
      await waitConfirmed(rpc, sent);
      await ledger.append(sentIntent(sent, Number(lifetime.lastValidBlockHeight), 1_500_000, HOUR));
      const confirmed = await finalEntry(ledger, sent);
      expect(confirmed).toMatchObject({ outcome: 'confirmed', key: 'alpha', balance_change: -(1_500_000 + FEE) });
      // Two engines on one ledger (and every sweep after): one final entry.
      expect(await finalsOf(ledger, sent)).toHaveLength(1);
    } finally {
      await sweeping.close();
    }
  });

  it('a sign-only transaction signed while an orphan waits minutes to be due is watched at once', async () => {
    // The engine above still watches `recent`, due in about six minutes: its watcher sleeps until then.
    expect(engine).not.toBeNull();
    const sent = await signOnlyAndSend(engine!, 2_000_000, await latestLifetime(rpc));
    const final = await finalEntry(ledger, sent);
    expect(final).toMatchObject({ outcome: 'confirmed', detail: 'sign_only: landed' });
  });
});

describe('pendingIntents', () => {
  const keyConfig = () => w.config.keys[0]!;
  const timings = { confirm_deadline_ms: 150_000 };

  it('a sent intent waits out twice the confirmation deadline and a minute; a sign-only one does not wait', () => {
    const now = nowSeconds();
    const entries = [
      { ...sentIntent('sent1', 100, 1, 0), ts: now, seq: 1 },
      {
        ...sentIntent('only1', 100, 1, 0),
        ts: now,
        seq: 2,
        detail: 'sign_only: watched until block height 100',
        watch: intentWatch('sign_only', 100, null),
      },
    ] as unknown as AuditEntry[];
    const [sent, only] = pendingIntents(entries, keyConfig(), timings);
    expect(orphanAfterMs(timings)).toBe(360_000);
    expect(sent).toMatchObject({ signature: 'sent1', orphan: true, notBefore: now * 1000 + 360_000 });
    expect(only).toMatchObject({ signature: 'only1', orphan: false, notBefore: 0 });
    // A running process's look for what another left takes neither until both are orphans, to the millisecond.
    const due = now * 1000 + orphanAfterMs(timings);
    expect(pendingIntents(entries, keyConfig(), timings, due - 1)).toEqual([]);
    expect(pendingIntents(entries, keyConfig(), timings, due).map((p) => p.signature)).toEqual(['sent1', 'only1']);
  });

  it('an intent with a final entry is not pending', () => {
    const entries = [
      { ...sentIntent('sent2', 100, 1, 0), seq: 1 },
      { ...sentIntent('sent2', 100, 1, 0), command: 'sign', outcome: 'confirmed', seq: 2 },
    ] as unknown as AuditEntry[];
    expect(pendingIntents(entries, keyConfig(), timings)).toEqual([]);
  });
});
