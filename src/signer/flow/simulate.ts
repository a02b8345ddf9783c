/**
 * Simulation of the exact transaction that would be sent, and the figures a report carries from it: compute
 * units, the fee the RPC quotes, and the key's balance change. A fee the RPC cannot quote stays unknown (null),
 * never assumed to be 0; the cap gate refuses what it cannot bound.
 */
import type { ChainClient, SimulationResult } from '../../chain/types';
import type { KeyConfig } from '../../config/types';
import { programError } from '../checks';
import type { Report } from '../report';
import type { Step } from './step';
import type { BuiltTransaction } from './transaction';

export interface Figures {
  sim: SimulationResult;
  fee: number | null;
  balanceChange: number | null;
}

export async function simulate(
  chain: ChainClient,
  built: BuiltTransaction,
  key: KeyConfig,
  mode: 'check' | 'sign',
): Promise<Figures> {
  const messageBase64 = Buffer.from(built.prepared.msg.bytes).toString('base64');
  const [pre, sim, fee] = await Promise.all([
    chain.getBalance(key.pubkey),
    chain.simulateTransaction(built.wireBase64, {
      sigVerify: mode === 'sign',
      replaceRecentBlockhash: mode === 'check',
      accounts: [key.pubkey],
    }),
    chain.getFeeForMessage(messageBase64).catch(() => null),
  ]);
  const post = sim.accounts[0]?.lamports;
  return { sim, fee, balanceChange: post === undefined ? null : post - pre };
}

/** Puts the figures on the report; a failed simulation stops the flow with outcome `simulation_failed`. */
export function recordSimulation(report: Report, f: Figures, prefix: string | null = null): Step {
  report.compute_units = f.sim.unitsConsumed;
  report.fee = f.fee;
  report.balance_change = f.balanceChange;
  if (f.sim.err === null) return { ok: true };
  report.outcome = 'simulation_failed';
  report.program_error = programError(f.sim.logs);
  const cause = report.program_error ?? `simulation error ${JSON.stringify(f.sim.err)}`;
  report.detail = prefix ? `${prefix}: ${cause}` : cause;
  report.error = f.sim.err;
  report.logs = f.sim.logs;
  return { ok: false, report };
}
