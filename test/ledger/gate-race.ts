/**
 * The sign flow's cap gate (src/signer/flow/gate.ts), run as it is on a store's handles, without a chain: a
 * simulated spend, one gate. Several handles stand for several processes or replicas on one store.
 */
import crypto from 'node:crypto';
import type { KeyConfig } from '../../src/config/types';
import type { Ledger } from '../../src/ledger/types';
import { silentLogger } from '../../src/signer/engine-deps';
import { passGate } from '../../src/signer/flow/gate';
import { createHaltBook } from '../../src/signer/halts';
import { emptyReport, type Report } from '../../src/signer/report';
import { encodeBase58 } from '../../src/util/base58';

const SYSTEM_PROGRAM = '11111111111111111111111111111111';

export function gateKey(name: string, dailyCap: number): KeyConfig {
  return {
    name,
    class: 'session',
    pubkey: encodeBase58(crypto.randomBytes(32)),
    profile: null,
    approval: 'auto',
    transfer_to: [],
    extra_programs: [],
    rate_limit_per_minute: 1_000,
    daily_lamport_cap: dailyCap,
    allow_unattended: false,
  };
}

/** One gate for a transaction that spends `spend` lamports: the report it leaves, and whether it passed. */
export async function gateOnce(
  ledger: Ledger,
  key: KeyConfig,
  spend: number,
): Promise<{ passed: boolean; report: Report }> {
  const report = emptyReport({ key: key.name, summary: 'gate', warnings: [], payload_hash: 'ab'.repeat(32) });
  report.balance_change = -spend;
  const gated = await passGate(
    { ledger, halts: createHaltBook({ ledger, log: silentLogger }), log: silentLogger },
    {
      rec: { key, payloadHash: report.payload_hash, summary: 'gate', programs: [SYSTEM_PROGRAM], intent: null },
      built: { signature: encodeBase58(crypto.randomBytes(64)) },
      figures: { balanceChange: -spend, gains: [], tokens: { mints: [], authority: [] }, mints: new Map() },
      usd: null,
      report,
      signal: undefined,
      progress: () => undefined,
    },
  );
  return { passed: gated.ok, report };
}
