/**
 * The Datalog the signer's own commands write: the root block of a credential it issues and the checks a narrowing
 * block holds. Pure text from validated names, one check per limit, each true for every request it does not
 * concern (a key check is about `tools/call`; discovery and the lists name no key), so each check says one thing.
 * docs/credentials.md shows the same checks for agents that write their blocks with another Biscuit library.
 */
import { SignerError } from '../util/errors';
import { parseUsd } from '../util/usd-amounts';
import {
  BUDGET_PREDICATE,
  ROOT_PREDICATE,
  TOOLS,
  USD_BUDGET_PREDICATE,
  USD_OUT_PREDICATE,
  type ToolName,
} from './vocabulary';

/** What a narrowing block may limit; every field absent leaves that side as the parent has it. */
export interface Narrowing {
  /** Only these keys (a subset of what the parent allows, or nothing is allowed). */
  keys?: readonly string[];
  /** Only these tools. */
  tools?: readonly ToolName[];
  /** `sign_only`: a sign must return the signed transaction, never send it; `check`: never sign at all. */
  mode?: NarrowMode;
  /** Refused from this instant on (the signer's clock). */
  expiresAt?: Date;
  /** A transaction may make the key lose at most this many lamports, fee included (judged on the simulation). */
  perTxLamports?: number;
  /** Lamports may go only to these accounts (judged on the simulation). */
  destinations?: readonly string[];
  /**
   * The block's own daily budget: its signs (this credential's and every one narrowed from it, all keys together)
   * may reserve and spend at most this many lamports in 24 h, kept by the signer in its ledger.
   */
  perDayLamports?: number;
  /**
   * A transaction may take at most this many dollars out of the key (`"5.00"`: dollars with at most two decimals, as
   * a key's `usd` caps are written), valued as the key's dollar caps value it; an unpriced spend is refused.
   */
  perTxUsd?: string;
  /** The block's own daily dollar budget (`"20.00"`), kept like `perDayLamports` on the dollars the ledger records. */
  perDayUsd?: string;
  /** A transaction may make the key lose at most this many base units of each mint named (judged on the simulation). */
  perTxTokens?: readonly { mint: string; amount: number }[];
}

export const NARROW_MODES = ['sign_only', 'check'] as const;
export type NarrowMode = (typeof NARROW_MODES)[number];

/** The names a credential's checks quote: key and token names' own rule, so none needs escaping. */
const NAME = /^[a-z0-9_-]{1,64}$/;

function names(list: readonly string[], what: string): string {
  if (list.length === 0) throw new SignerError('request_invalid', `${what}: give at least one`);
  for (const n of list)
    if (!NAME.test(n))
      throw new SignerError(
        'request_invalid',
        `${what}: ${JSON.stringify(n)} is not a name (1 to 64 lowercase letters, digits, '-' or '_')`,
      );
  return `[${[...new Set(list)].map((n) => `"${n}"`).join(', ')}]`;
}

/** A Datalog date: RFC 3339 in UTC, to the second. */
function datalogDate(d: Date): string {
  if (Number.isNaN(d.getTime())) throw new SignerError('request_invalid', 'the expiry is not a valid time');
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** True for a request that is not a tool call: the lists and discovery concern no key, tool or mode. */
const NOT_A_TOOL_CALL = 'method($m), $m != "tools/call"';

export function keysCheck(keys: readonly string[]): string {
  return `check if ${NOT_A_TOOL_CALL} or key($k), ${names(keys, 'keys')}.contains($k)`;
}

export function toolsCheck(tools: readonly string[]): string {
  for (const t of tools)
    if (!(TOOLS as readonly string[]).includes(t))
      throw new SignerError('request_invalid', `tools: ${JSON.stringify(t)} is not one of ${TOOLS.join(', ')}`);
  return `check if ${NOT_A_TOOL_CALL} or tool($t), ${names(tools, 'tools')}.contains($t)`;
}

export function modeCheck(mode: NarrowMode): string {
  if (mode === 'sign_only') return `check if ${NOT_A_TOOL_CALL} or tool($t), $t != "sign" or mode("sign_only")`;
  return `check if ${NOT_A_TOOL_CALL} or tool($t), $t != "sign"`;
}

/** A spend limit refuses what the simulation shows; before a simulation there is no spend fact, and nothing to refuse. */
export function perTxLamportsCheck(lamports: number): string {
  if (!Number.isSafeInteger(lamports) || lamports < 0)
    throw new SignerError('request_invalid', `per-tx lamports: ${String(lamports)} is not a whole number of lamports`);
  return `reject if lamports_out($n), $n > ${lamports}`;
}

/** A budget, not a check on the request: the signer keeps it (vocabulary.ts BUDGET_PREDICATE) and states it kept. */
export function perDayLamportsCheck(lamports: number): string {
  if (!Number.isSafeInteger(lamports) || lamports < 0)
    throw new SignerError('request_invalid', `per-day lamports: ${String(lamports)} is not a whole number of lamports`);
  return `check if ${BUDGET_PREDICATE}(${lamports})`;
}

/** Dollars with cents (`"5.00"`) as whole micro-dollars, the unit the checks state; other forms refused clearly. */
function usdMicros(v: unknown, what: string): number {
  const parsed = parseUsd(v);
  if (!parsed.ok) throw new SignerError('request_invalid', `${what}: ${parsed.message}`);
  const micros = Number(parsed.micros);
  if (!Number.isSafeInteger(micros))
    throw new SignerError('request_invalid', `${what}: at most 9000000000 dollars (a larger figure is not counted)`);
  return micros;
}

/** A dollar limit per transaction, in micro-dollars; like the lamport limit, it refuses what the valuation shows. */
export function perTxUsdCheck(dollars: string): string {
  return `reject if ${USD_OUT_PREDICATE}($n), $n > ${usdMicros(dollars, 'per-tx USD')}`;
}

/** A daily dollar budget in micro-dollars: kept by the signer like the lamport budget (vocabulary.ts). */
export function perDayUsdCheck(dollars: string): string {
  return `check if ${USD_BUDGET_PREDICATE}(${usdMicros(dollars, 'per-day USD')})`;
}

/** A Solana address, base58 (what the simulation names an account by). */
const ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

export function destinationsCheck(destinations: readonly string[]): string {
  if (destinations.length === 0) throw new SignerError('request_invalid', 'destinations: give at least one');
  for (const d of destinations)
    if (!ADDRESS.test(d))
      throw new SignerError('request_invalid', `destinations: ${JSON.stringify(d.slice(0, 60))} is not an address`);
  return `reject if destination($d), ![${[...new Set(destinations)].map((d) => `"${d}"`).join(', ')}].contains($d)`;
}

/** A per-transaction limit on one mint, in its base units: refuses what the simulation shows the key losing of it. */
export function perTxTokenCheck(mint: string, amount: number): string {
  if (!ADDRESS.test(mint))
    throw new SignerError(
      'request_invalid',
      `per-tx token: ${JSON.stringify(mint.slice(0, 60))} is not a mint address`,
    );
  if (!Number.isSafeInteger(amount) || amount < 0)
    throw new SignerError(
      'request_invalid',
      `per-tx token: ${String(amount)} is not a whole number of base units (at most 9007199254740991)`,
    );
  return `reject if token_out("${mint}", $n), $n > ${amount}`;
}

export function expiryCheck(at: Date): string {
  return `check if time($t), $t <= ${datalogDate(at)}`;
}

/** A narrowing block's checks, in a fixed order (keys, tools, mode, expiry, spend, budget); at least one. */
export function narrowingChecks(n: Narrowing): string[] {
  const checks: string[] = [];
  if (n.keys !== undefined) checks.push(keysCheck(n.keys));
  if (n.tools !== undefined) checks.push(toolsCheck(n.tools));
  if (n.mode !== undefined) {
    if (!(NARROW_MODES as readonly string[]).includes(n.mode))
      throw new SignerError(
        'request_invalid',
        `mode: ${JSON.stringify(n.mode)} is not one of ${NARROW_MODES.join(', ')}`,
      );
    checks.push(modeCheck(n.mode));
  }
  if (n.expiresAt !== undefined) checks.push(expiryCheck(n.expiresAt));
  if (n.perTxLamports !== undefined) checks.push(perTxLamportsCheck(n.perTxLamports));
  if (n.destinations !== undefined) checks.push(destinationsCheck(n.destinations));
  if (n.perDayLamports !== undefined) checks.push(perDayLamportsCheck(n.perDayLamports));
  if (n.perTxUsd !== undefined) checks.push(perTxUsdCheck(n.perTxUsd));
  if (n.perDayUsd !== undefined) checks.push(perDayUsdCheck(n.perDayUsd));
  for (const t of n.perTxTokens ?? []) checks.push(perTxTokenCheck(t.mint, t.amount));
  if (checks.length === 0)
    throw new SignerError(
      'request_invalid',
      'a narrowing block needs at least one limit (keys, tools, mode, expiry, per-tx lamports, destinations, per-day lamports, per-tx USD, per-day USD or per-tx token)',
    );
  return checks;
}

/**
 * The root block: who the credential is (the config's name for it), the keys it may use, its expiry if any, and its
 * daily budget if any (the whole tree's signs together, all keys).
 */
export function rootBlock(name: string, keys: readonly string[], expiresAt?: Date, perDayLamports?: number): string {
  if (!NAME.test(name))
    throw new SignerError(
      'request_invalid',
      `credential name ${JSON.stringify(name)}: use 1 to 64 lowercase letters, digits, '-' or '_'`,
    );
  const lines = [`${ROOT_PREDICATE}("${name}")`, keysCheck(keys)];
  if (expiresAt !== undefined) lines.push(expiryCheck(expiresAt));
  if (perDayLamports !== undefined) lines.push(perDayLamportsCheck(perDayLamports));
  return lines.map((l) => `${l};\n`).join('');
}
