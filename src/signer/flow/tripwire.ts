/**
 * The tripwire after the fact. The caps judge what the simulation says a transaction moves; once it has landed,
 * its metadata says what it moved. When the key lost more than its intent reserved (lamports, base units of any
 * mint, or, for a key with dollar caps, dollars: the landed amounts valued at the prices the intent recorded, never
 * re-priced), whatever let that happen (a state change between simulation and landing, a node that answered wrongly,
 * a hole not known yet), the final entry records the real spend, the key is halted with the reason, and an alert
 * is raised: the caps then hold from the next sign on, and an operator looks before anything else is signed with
 * that key (docs/policy.md, "The tripwire").
 */
import type { TokenBalance, TransactionMeta } from '../../rpc/types';
import type { TokenFigure, UsdPriceFigure } from '../../ledger/types';
import { usdOverspend, valueAtRecorded, type RecordedValue } from '../../pricing/recorded-prices';
import type { UsdMicros } from '../../util/usd-amounts';
import type { EngineLogger, EngineObserver } from '../engine-deps';
import { nowSeconds } from '../../util/time';
import type { HaltBook } from '../halts';
import type { Report } from '../report';

/** What the key lost in a landed transaction: lamports, and per mint its change and what each other owner got. */
export interface LandedSpend {
  /** Lamports the key lost (0 for a gain); null when the metadata does not list the key's balance. */
  lamports: number | null;
  tokens: Map<string, { change: bigint; credits: Map<string, bigint> }>;
}

/** The key's lamport and token changes from a landed transaction's pre- and post-balances. */
export function landedSpend(meta: TransactionMeta, keyPubkey: string): LandedSpend {
  const keys = [...meta.accountKeys, ...meta.loadedAddresses];
  const at = keys.indexOf(keyPubkey);
  const pre = meta.preBalances[at];
  const post = meta.postBalances[at];
  const lamports = at >= 0 && pre !== undefined && post !== undefined ? Math.max(0, pre - post) : null;
  const tokens: LandedSpend['tokens'] = new Map();
  const byAccount = new Map<number, { mint: string; owner: string | null; pre: bigint; post: bigint }>();
  const note = (b: TokenBalance, side: 'pre' | 'post'): void => {
    const entry = byAccount.get(b.accountIndex) ?? { mint: b.mint, owner: b.owner, pre: 0n, post: 0n };
    entry[side] = b.amount;
    entry.owner = entry.owner ?? b.owner;
    byAccount.set(b.accountIndex, entry);
  };
  for (const b of meta.preTokenBalances) note(b, 'pre');
  for (const b of meta.postTokenBalances) note(b, 'post');
  for (const { mint, owner, pre: before, post: after } of byAccount.values()) {
    const m = tokens.get(mint) ?? { change: 0n, credits: new Map<string, bigint>() };
    const delta = after - before;
    if (owner === keyPubkey) m.change += delta;
    else if (delta > 0n && owner !== null) m.credits.set(owner, (m.credits.get(owner) ?? 0n) + delta);
    tokens.set(mint, m);
  }
  return { lamports, tokens };
}

/** An intent's dollar value and the prices it was reached at (its `usd_micros` and `usd_prices`). */
export interface ReservedUsd {
  micros: UsdMicros;
  prices: readonly UsdPriceFigure[];
}

/** What the intent reserved: lamports, its token figures, and its dollar value (null: the key is not priced). */
export interface Reserved {
  lamports: number;
  tokens: readonly TokenFigure[] | null;
  usd: ReservedUsd | null;
}

/** The intent's recorded dollar value and prices, or null when it has none (a key without dollar caps). */
export function reservedUsdOf(entry: {
  usd_micros?: string | null;
  usd_prices?: UsdPriceFigure[] | null;
}): ReservedUsd | null {
  const micros = entry.usd_micros ?? null;
  if (micros === null || !/^\d+$/.test(micros)) return null;
  return { micros: BigInt(micros), prices: entry.usd_prices ?? [] };
}

/** The landed spend in dollars at the prices the intent recorded; null when the intent recorded no dollar value. */
export function landedUsd(reserved: Reserved, landed: LandedSpend): RecordedValue | null {
  if (reserved.usd === null) return null;
  const spent = new Map<string, bigint>();
  if (landed.lamports !== null) spent.set('SOL', BigInt(landed.lamports));
  for (const [mint, { change }] of landed.tokens) if (change < 0n) spent.set(mint, -change);
  return valueAtRecorded(reserved.usd.prices, spent);
}

/**
 * What the final entry records as the sign's dollar value: the landed value when it exceeds the reservation (the
 * real spend, as its lamports and tokens are), else nothing, and the intent's recorded value keeps counting.
 */
export function landedUsdToRecord(reserved: Reserved, landed: LandedSpend): string | null {
  const value = landedUsd(reserved, landed);
  return value !== null && reserved.usd !== null && value.usd > reserved.usd.micros ? value.usd.toString() : null;
}

/**
 * Where the landed spend exceeds the reservation, each as a sentence; empty when it does not. The dollar sentence
 * comes first: it is what an operator of a priced key reads, and a webhook carries only the start of a long reason.
 */
export function overspend(reserved: Reserved, landed: LandedSpend): string[] {
  const over: string[] = [];
  const usd = landedUsd(reserved, landed);
  const dollars = usd === null || reserved.usd === null ? null : usdOverspend(reserved.usd.micros, usd);
  if (dollars !== null) over.push(dollars);
  if (landed.lamports !== null && landed.lamports > reserved.lamports) {
    over.push(`${landed.lamports} lamports spent, ${reserved.lamports} reserved`);
  }
  for (const [mint, { change }] of landed.tokens) {
    const spent = change < 0n ? -change : 0n;
    const figure = (reserved.tokens ?? []).find((t) => t.mint === mint);
    const held = figure && BigInt(figure.change) < 0n ? -BigInt(figure.change) : 0n;
    if (spent > held) over.push(`${spent} base units of mint ${mint} spent, ${held} reserved`);
  }
  return over;
}

/** The landed token figures in the ledger's form (decimals as the intent knew them). */
export function landedTokenFigures(landed: LandedSpend, reserved: readonly TokenFigure[] | null): TokenFigure[] {
  return [...landed.tokens]
    .filter(([, m]) => m.change !== 0n || m.credits.size > 0)
    .map(([mint, m]) => ({
      mint,
      decimals: (reserved ?? []).find((t) => t.mint === mint)?.decimals ?? null,
      change: m.change.toString(),
      credits: [...m.credits].map(([owner, amount]) => ({ owner, amount: amount.toString() })),
    }));
}

export interface TripwireDeps {
  halts: HaltBook;
  log: EngineLogger;
  observer?: EngineObserver | undefined;
}

/** Halts the key with the reason and raises the alert; the reason is what the audit log and `key show` say. */
export async function trip(
  deps: TripwireDeps,
  input: { key: string; signature: string; over: readonly string[] },
): Promise<string> {
  const reason = `tripwire: transaction ${input.signature} landed spending more than the cap reserved for it (${input.over.join('; ')}); the real spend is recorded, and the key stays halted until an operator resumes it`;
  const written = await deps.halts.halt({ key: input.key, reason, by: 'signer (tripwire)', ts: nowSeconds() });
  deps.log.error(
    { key: input.key, signature: input.signature, over: input.over, halt_recorded: written.recorded },
    'tripwire: a landed transaction spent more than its reservation; the key is halted',
  );
  deps.observer?.alert({ kind: 'spend_over_reservation', key: input.key, signature: input.signature, detail: reason });
  return reason;
}

/**
 * After the send path's outcome: compares the landed metadata with the reservation; on an overspend the report
 * (and so the final entry) carries the real token figures, says why the key is halted, and the key is halted.
 * Returns the landed dollar value the final entry records (landedUsdToRecord), or null.
 */
export async function checkLanded(
  deps: TripwireDeps,
  input: {
    keyName: string;
    keyPubkey: string;
    report: Report;
    reservation: number;
    usd: ReservedUsd | null;
    meta: TransactionMeta | null;
  },
): Promise<string | null> {
  const { report, meta } = input;
  if (meta === null || report.signature === null) return null;
  if (report.outcome !== 'confirmed' && report.outcome !== 'failed') return null;
  const reservedTokens = report.token_changes;
  const reserved: Reserved = { lamports: input.reservation, tokens: reservedTokens, usd: input.usd };
  const landed = landedSpend(meta, input.keyPubkey);
  const over = overspend(reserved, landed);
  if (over.length === 0) return null;
  report.token_changes = landedTokenFigures(landed, reservedTokens).map((f) => ({ ...f, ui_change: null }));
  const reason = await trip(deps, { key: input.keyName, signature: report.signature, over });
  report.detail = report.detail ? `${report.detail}; ${reason}` : reason;
  return landedUsdToRecord(reserved, landed);
}
