/**
 * The audit hash chain (docs/operations.md, "Audit log"): canonical serialisation, the entry hash, verification of
 * a sequence of entries, and the JSONL export/verify used by `audit export` and `audit verify FILE`.
 *
 * The serialisation is fixed byte for byte, so a log written by the earlier Rust signer verifies here too:
 * compact JSON, fields in a fixed order, options as null. JSON.stringify escapes strings the way serde_json does
 * (`"`, `\\`, \b \f \n \r \t, other control characters as lowercase \u00xx, non-ASCII left as is), and integers
 * below 2^53 print identically; non-integers are refused before they get here (see `validateEntryInput`).
 */
import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { SignerError, errorMessage } from '../util/errors';
import { headMismatch } from './head';
import type {
  AuditCommand,
  AuditEntry,
  AuditEntryInput,
  ChainHead,
  IntentWatch,
  LamportCredit,
  TokenFigure,
  UsdPriceFigure,
  VerifyResult,
} from './types';

/** `prev` of the first entry. */
export const GENESIS_PREV = '0'.repeat(64);

/** A lamport credit as an entry records it. */
type EntryCredit = Pick<LamportCredit, 'address' | 'lamports'>;

const COMMANDS: readonly AuditCommand[] = ['sign', 'sign-intent', 'sign-message', 'halt', 'resume', 'reload'];
const HEX64 = /^[0-9a-f]{64}$/;
/** A credential block's revocation id: the hex of its signature (64 bytes for Ed25519). */
const REVOCATION_ID = /^[0-9a-f]{2,256}$/;

/** Compact JSON of an entry in the fixed field order. Built field by field so the order never depends on the input. */
export function serializeEntry(entry: AuditEntry): string {
  return JSON.stringify({
    ts: entry.ts,
    key: entry.key,
    command: entry.command,
    payload_hash: entry.payload_hash,
    programs: entry.programs,
    summary: entry.summary,
    intent: entry.intent,
    outcome: entry.outcome,
    detail: entry.detail,
    signature: entry.signature,
    slot: entry.slot,
    balance_change: entry.balance_change,
    // An entry that moved no tokens serialises without the field, so entries written before it existed (and the
    // earlier Rust signer's) hash exactly as they did.
    ...(entry.tokens ? { tokens: entry.tokens.map(copyFigure) } : {}),
    // Likewise for lamport credits: entries written before the field existed hash as they did.
    ...(entry.lamport_credits ? { lamport_credits: entry.lamport_credits.map(copyCredit) } : {}),
    // Likewise for an intent's dollar value.
    ...(typeof entry.usd_micros === 'string' ? { usd_micros: entry.usd_micros } : {}),
    // And for the prices it was valued at.
    ...(entry.usd_prices ? { usd_prices: entry.usd_prices.map(copyPrice) } : {}),
    // Likewise for the credential blocks whose budgets an intent counts against.
    ...(entry.budget_blocks ? { budget_blocks: [...entry.budget_blocks] } : {}),
    prev: entry.prev,
    hash: entry.hash,
  });
}

/** A figure's fields in their fixed order. */
function copyFigure(f: TokenFigure): TokenFigure {
  return {
    mint: f.mint,
    decimals: f.decimals,
    change: f.change,
    credits: f.credits.map((c) => ({ owner: c.owner, amount: c.amount })),
    // Written since treasuries: an entry from before has none, and hashes as it always did.
    ...(f.delegated ? { delegated: f.delegated.map((d) => ({ account: d.account, change: d.change })) } : {}),
  };
}

/** A lamport credit's fields in their fixed order. */
function copyCredit(c: EntryCredit): EntryCredit {
  return { address: c.address, lamports: c.lamports };
}

/** A recorded price's fields in their fixed order. */
function copyPrice(p: UsdPriceFigure): UsdPriceFigure {
  return {
    asset: p.asset,
    decimals: p.decimals,
    amount: p.amount,
    usd_micros: p.usd_micros,
    price: p.price,
    conf: p.conf,
    exponent: p.exponent,
    publish_time: p.publish_time,
    account: p.account,
  };
}

/** sha256 hex of the entry serialised with `hash` set to "". */
export function hashEntry(entry: Omit<AuditEntry, 'hash'> & { hash?: string }): string {
  return createHash('sha256')
    .update(serializeEntry({ ...entry, hash: '' }))
    .digest('hex');
}

/** Links an input to the chain: sets `prev` and computes `hash` (over the serialised fields: `watch` is not one). */
export function sealEntry(input: AuditEntryInput, prev: string): AuditEntry {
  const unsealed = { ...copyInput(input), prev, hash: '' };
  return { ...unsealed, hash: hashEntry(unsealed), ...(input.watch ? { watch: { ...input.watch } } : {}) };
}

/** Copies exactly the input fields, so stray properties on the caller's object never reach the chain. */
function copyInput(e: AuditEntryInput): AuditEntryInput {
  return {
    ts: e.ts,
    key: e.key,
    command: e.command,
    payload_hash: e.payload_hash,
    programs: [...e.programs],
    summary: boundSummary(e.summary),
    intent: e.intent,
    outcome: e.outcome,
    detail: e.detail,
    signature: e.signature,
    slot: e.slot,
    balance_change: e.balance_change,
    ...(e.tokens ? { tokens: e.tokens.map(copyFigure) } : {}),
    ...(e.lamport_credits ? { lamport_credits: e.lamport_credits.map(copyCredit) } : {}),
    ...(typeof e.usd_micros === 'string' ? { usd_micros: e.usd_micros } : {}),
    ...(e.usd_prices ? { usd_prices: e.usd_prices.map(copyPrice) } : {}),
    ...(e.budget_blocks ? { budget_blocks: [...e.budget_blocks] } : {}),
  };
}

/** Longest summary (or halt reason) the chain stores, in characters; an agent writes it, so it is bounded here. */
export const MAX_STORED_SUMMARY = 512;

/**
 * The summary as stored: at most MAX_STORED_SUMMARY characters (code points, so a pair is never split), a longer
 * one cut with a marker that says how much was dropped, so a reader knows it is not the whole text.
 */
export function boundSummary(summary: string): string {
  if (summary.length <= MAX_STORED_SUMMARY) return summary;
  const chars = Array.from(summary);
  if (chars.length <= MAX_STORED_SUMMARY) return summary;
  const marker = (dropped: number) => `… [cut: ${dropped} more characters]`;
  const keep = MAX_STORED_SUMMARY - marker(chars.length).length;
  return chars.slice(0, keep).join('') + marker(chars.length - keep);
}

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v);
const isNullableString = (v: unknown): v is string | null => v === null || typeof v === 'string';
const isNullableInt = (v: unknown): v is number | null => v === null || isInt(v);

/** Why an input cannot be written to the chain, or null when it is well formed. */
export function entryInputProblem(e: unknown): string | null {
  if (typeof e !== 'object' || e === null) return 'not an object';
  const o = e as Record<string, unknown>;
  if (!isInt(o.ts) || o.ts < 0) return 'ts must be a non-negative integer (unix seconds)';
  if (typeof o.key !== 'string' || o.key.length === 0) return 'key must be a non-empty string';
  if (typeof o.command !== 'string' || !COMMANDS.includes(o.command as AuditCommand))
    return `command must be one of ${COMMANDS.join(', ')}`;
  if (typeof o.payload_hash !== 'string') return 'payload_hash must be a string';
  if (!Array.isArray(o.programs) || !o.programs.every((p) => typeof p === 'string'))
    return 'programs must be an array of strings';
  if (typeof o.summary !== 'string') return 'summary must be a string';
  if (!isNullableString(o.intent)) return 'intent must be a string or null';
  if (typeof o.outcome !== 'string') return 'outcome must be a string';
  if (!isNullableString(o.detail)) return 'detail must be a string or null';
  if (!isNullableString(o.signature)) return 'signature must be a string or null';
  if (!isNullableInt(o.slot) || (o.slot !== null && o.slot < 0)) return 'slot must be a non-negative integer or null';
  if (!isNullableInt(o.balance_change)) return 'balance_change must be an integer or null';
  if (o.tokens !== undefined && o.tokens !== null && !(Array.isArray(o.tokens) && o.tokens.every(isTokenFigure)))
    return 'tokens must be a list of {mint, decimals, change, credits} or null';
  if (
    o.lamport_credits !== undefined &&
    o.lamport_credits !== null &&
    !(Array.isArray(o.lamport_credits) && o.lamport_credits.every(isLamportCredit))
  )
    return 'lamport_credits must be a list of {address, lamports} or null';
  if (
    o.usd_micros !== undefined &&
    o.usd_micros !== null &&
    !(typeof o.usd_micros === 'string' && /^\d{1,30}$/.test(o.usd_micros))
  )
    return 'usd_micros must be a non-negative integer as a decimal string, or null';
  if (
    o.usd_prices !== undefined &&
    o.usd_prices !== null &&
    !(Array.isArray(o.usd_prices) && o.usd_prices.every(isPriceFigure))
  )
    return 'usd_prices must be a list of {asset, decimals, amount, usd_micros, price, conf, exponent, publish_time, account} or null';
  if (
    o.budget_blocks !== undefined &&
    o.budget_blocks !== null &&
    !(
      Array.isArray(o.budget_blocks) &&
      o.budget_blocks.length > 0 &&
      o.budget_blocks.every((b) => typeof b === 'string' && REVOCATION_ID.test(b))
    )
  )
    return 'budget_blocks must be a non-empty list of revocation ids (hex) or null';
  if (o.watch !== undefined && o.watch !== null && !isIntentWatch(o.watch))
    return 'watch must be {mode, last_valid_block_height, fee_payer, from_slot} or null';
  return null;
}

function isIntentWatch(v: unknown): v is IntentWatch {
  if (typeof v !== 'object' || v === null) return false;
  const w = v as Record<string, unknown>;
  return (
    (w.mode === 'send' || w.mode === 'sign_only') &&
    isInt(w.last_valid_block_height) &&
    w.last_valid_block_height >= 0 &&
    isNullableString(w.fee_payer) &&
    isNullableInt(w.from_slot)
  );
}

const DECIMAL = /^-?(0|[1-9]\d*)$/;

function isLamportCredit(v: unknown): v is EntryCredit {
  if (typeof v !== 'object' || v === null) return false;
  const c = v as Record<string, unknown>;
  return typeof c.address === 'string' && isInt(c.lamports) && c.lamports >= 0;
}

function isPriceFigure(v: unknown): v is UsdPriceFigure {
  if (typeof v !== 'object' || v === null) return false;
  const p = v as Record<string, unknown>;
  const decimal = (x: unknown) => typeof x === 'string' && DECIMAL.test(x);
  return (
    typeof p.asset === 'string' &&
    isInt(p.decimals) &&
    decimal(p.amount) &&
    decimal(p.usd_micros) &&
    decimal(p.price) &&
    decimal(p.conf) &&
    isInt(p.exponent) &&
    isInt(p.publish_time) &&
    typeof p.account === 'string'
  );
}

function isTokenFigure(v: unknown): v is TokenFigure {
  if (typeof v !== 'object' || v === null) return false;
  const f = v as Record<string, unknown>;
  return (
    typeof f.mint === 'string' &&
    isNullableInt(f.decimals) &&
    typeof f.change === 'string' &&
    DECIMAL.test(f.change) &&
    Array.isArray(f.credits) &&
    f.credits.every((c: unknown) => {
      if (typeof c !== 'object' || c === null) return false;
      const o = c as Record<string, unknown>;
      return typeof o.owner === 'string' && typeof o.amount === 'string' && DECIMAL.test(o.amount);
    }) &&
    (f.delegated === undefined ||
      (Array.isArray(f.delegated) &&
        f.delegated.every((d: unknown) => {
          if (typeof d !== 'object' || d === null) return false;
          const o = d as Record<string, unknown>;
          return typeof o.account === 'string' && typeof o.change === 'string' && DECIMAL.test(o.change);
        })))
  );
}

/** Throws SignerError('internal') for an input the chain cannot hold: that is a caller bug, not a store failure. */
export function validateEntryInput(e: AuditEntryInput): void {
  const problem = entryInputProblem(e);
  if (problem !== null) throw new SignerError('internal', `audit entry rejected: ${problem}`);
}

/** Guard for an entry read back from JSONL. */
export function isAuditEntry(v: unknown): v is AuditEntry {
  if (entryInputProblem(v) !== null) return false;
  const o = v as Record<string, unknown>;
  return typeof o.prev === 'string' && typeof o.hash === 'string';
}

/**
 * Walks the chain: each entry's `prev` must equal the running previous hash and its recomputed hash must equal
 * `hash`. Lines are numbered from 1 (the entry's position in the chain).
 */
export async function verifyEntries(entries: Iterable<AuditEntry> | AsyncIterable<AuditEntry>): Promise<VerifyResult> {
  const check = new ChainChecker();
  for await (const entry of entries) {
    const broken = check.next(entry);
    if (broken) return broken;
  }
  return check.result();
}

/** Incremental verifier, shared by the store walk and the file walk. */
export class ChainChecker {
  private prev = GENESIS_PREV;
  private count = 0;

  /** Feeds one entry; returns a failure result when the chain breaks here, else null. */
  next(entry: AuditEntry, line = this.count + 1): VerifyResult | null {
    this.count += 1;
    if (entry.prev !== this.prev)
      return {
        ok: false,
        entries: this.count,
        line,
        reason: `broken: line ${line}: prev does not match the previous entry`,
      };
    if (!HEX64.test(entry.hash) || hashEntry(entry) !== entry.hash)
      return { ok: false, entries: this.count, line, reason: `broken: line ${line}: hash does not match its content` };
    this.prev = entry.hash;
    return null;
  }

  /** The hash of the last entry accepted (GENESIS_PREV before the first). */
  get lastHash(): string {
    return this.prev;
  }

  /** The running result so far (a failure line reported by `next` is the caller's to return). */
  result(): VerifyResult {
    return { ok: true, entries: this.count };
  }

  fail(line: number, reason: string): VerifyResult {
    return { ok: false, entries: this.count, line, reason };
  }
}

/**
 * Writes the entries as JSON Lines (the `audit.jsonl` format the Rust signer wrote too) to `file`, mode 0600, atomically:
 * a temporary file in the same folder, fsync'd, then renamed. Returns the number of entries written.
 */
export async function exportJsonl(
  entries: Iterable<AuditEntry> | AsyncIterable<AuditEntry>,
  file: string,
): Promise<number> {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${Date.now()}.tmp`);
  let count = 0;
  try {
    const fh = await fsp.open(tmp, 'wx', 0o600);
    try {
      let buf: string[] = [];
      for await (const e of entries) {
        buf.push(serializeEntry(e) + '\n');
        count += 1;
        if (buf.length >= 1000) {
          await fh.write(buf.join(''));
          buf = [];
        }
      }
      if (buf.length) await fh.write(buf.join(''));
      await fh.sync();
    } finally {
      await fh.close();
    }
    await fsp.rename(tmp, file);
  } catch (e) {
    await fsp.rm(tmp, { force: true }).catch(() => undefined);
    if (e instanceof SignerError) throw e;
    throw new SignerError('ledger', `cannot write the audit export ${file}: ${errorMessage(e)}`, { cause: e });
  }
  return count;
}

/**
 * Verifies a JSONL audit file, and with `head` (what `audit export` printed) that the file ends where the ledger
 * did then: a file cut short still links up, so only the head shows it. An unparseable line fails with "audit line N is not valid JSON" (such a log cannot
 * be appended to either). A blank line at the very end (after the last newline) is ignored; a blank
 * line in the middle is reported like any other unparseable line.
 */
export async function verifyJsonlFile(file: string, head?: ChainHead): Promise<VerifyResult> {
  let stream;
  try {
    const fh = await fsp.open(file, 'r');
    stream = fh.createReadStream({ encoding: 'utf8' });
  } catch (e) {
    throw new SignerError('ledger', `cannot read the audit file ${file}: ${errorMessage(e)}`, { cause: e });
  }
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  const check = new ChainChecker();
  let lineNo = 0;
  let pendingBlank: number | null = null;
  try {
    for await (const line of lines) {
      lineNo += 1;
      if (pendingBlank !== null) return check.fail(pendingBlank, `audit line ${pendingBlank} is not valid JSON`);
      if (line.length === 0) {
        pendingBlank = lineNo;
        continue;
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        return check.fail(lineNo, `audit line ${lineNo} is not valid JSON`);
      }
      if (!isAuditEntry(parsed)) return check.fail(lineNo, `audit line ${lineNo} is not an audit entry`);
      const broken = check.next(parsed, lineNo);
      if (broken) return broken;
    }
  } finally {
    lines.close();
    stream.destroy();
  }
  const count = check.result().entries;
  const problem = head ? headMismatch(count, check.lastHash, head) : null;
  return problem ? check.fail(count + 1, problem) : check.result();
}
