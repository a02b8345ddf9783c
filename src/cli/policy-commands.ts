/**
 * `sa-forge-signer policy test CASES.yaml` and `policy replay --since 7d`, both under the config given with
 * `--config NEW.yaml` (else the usual one): what a policy does before it goes live (docs/policy.md, "Before it goes
 * live"). Both print a table and exit 1 when a case differs or a recorded sign would be refused.
 */
import fs from 'node:fs';
import path from 'node:path';
import { readDocument } from '../config/load';
import type { SignerConfig } from '../config/types';
import type { AuditEntry } from '../ledger/types';
import { SPEND_WINDOW_S } from '../ledger/usage-book';
import { REASON_NAMES, type Reason } from '../signer/refusals';
import { parseSince, replaySigns, type ReplayRow } from '../signer/replay';
import { checkNameFromInput } from '../signer/vocabulary';
import { SignerError, errorMessage } from '../util/errors';
import { isRecord } from '../util/is-record';
import { nowSeconds } from '../util/time';
import { showUntrusted } from '../util/untrusted';
import { option } from './args';
import type { ParsedArgs } from './args';
import { usageOf } from './commands';
import { config, outJson, out, withEngine, withLedger } from './context';
import { table } from './render';

const OUTCOMES = ['ok', 'refused', 'simulation_failed'] as const;

export interface PolicyCase {
  name: string;
  key: string | null;
  payload: unknown;
  expect: (typeof OUTCOMES)[number];
  failed_check: string | null;
  /** The refusal's reason the case pins (src/signer/refusals.ts); null: any. */
  reason: Reason | null;
}

function fail(message: string): never {
  throw new SignerError('request_invalid', message);
}

/**
 * CASES.yaml: `cases:` a list of { name, key?, payload (inline) | payload_file (JSON, relative to CASES.yaml; a
 * kit-built transaction's v2 payload too), expect: ok|refused|simulation_failed, failed_check?, reason? }.
 */
export function readCases(file: string): PolicyCase[] {
  const doc = readDocument(file);
  const list = isRecord(doc) ? doc.cases : undefined;
  if (!Array.isArray(list) || list.length === 0) fail(`${file}: needs a non-empty list under cases:`);
  return list.map((raw, i): PolicyCase => {
    const where = `${file}: cases[${String(i)}]`;
    if (!isRecord(raw)) fail(`${where}: must be a mapping`);
    const name = typeof raw.name === 'string' && raw.name !== '' ? raw.name : fail(`${where}.name: required`);
    if (!OUTCOMES.includes(raw.expect as PolicyCase['expect'])) fail(`${where}.expect: one of ${OUTCOMES.join(', ')}`);
    let payload: unknown = raw.payload;
    if (typeof raw.payload_file === 'string') {
      const at = path.resolve(path.dirname(file), raw.payload_file);
      try {
        payload = JSON.parse(fs.readFileSync(at, 'utf8')) as unknown;
      } catch (e) {
        fail(`${where}.payload_file: cannot read ${at}: ${errorMessage(e)}`);
      }
    }
    if (payload === undefined) fail(`${where}: needs payload or payload_file`);
    const failedCheck = raw.failed_check;
    if (failedCheck !== undefined && failedCheck !== null && typeof failedCheck !== 'string')
      fail(`${where}.failed_check: a check name`);
    const reason = raw.reason ?? null;
    if (reason !== null && !REASON_NAMES.includes(reason as Reason))
      fail(`${where}.reason: one of the reasons docs/reports.md lists`);
    return {
      name,
      key: typeof raw.key === 'string' ? raw.key : null,
      payload,
      expect: raw.expect as PolicyCase['expect'],
      // A renamed check's old spelling (`chain`) still pins it.
      failed_check: typeof failedCheck === 'string' ? checkNameFromInput(failedCheck) : null,
      reason: reason as Reason | null,
    };
  });
}

/** `refused (limits)`, with the reason when the case pins one: `refused (limits: per_tx_cap)`. */
const shown = (outcome: string, check: string | null, reason: string | null): string =>
  check === null ? outcome : `${outcome} (${check}${reason === null ? '' : `: ${reason}`})`;

export async function policyTest(args: ParsedArgs): Promise<number> {
  const file = args.positional[2] ?? fail(usageOf('policy test'));
  const cases = readCases(file);
  const cfg = config(args);
  const results = await withEngine(cfg, async (engine) => {
    const done = [];
    for (const c of cases) {
      const report = await engine.check({ payload: c.payload, key: c.key, principal: { kind: 'operator' } });
      const got = { outcome: report.outcome, failed_check: report.failed_check, reason: report.reason };
      const same =
        got.outcome === c.expect &&
        (c.failed_check === null || got.failed_check === c.failed_check) &&
        (c.reason === null || got.reason === c.reason);
      done.push({ case: c, got, same, detail: report.detail });
    }
    return done;
  });
  const differ = results.filter((r) => !r.same).length;
  if (args.options.get('json') === true)
    outJson(
      results.map((r) => ({
        name: r.case.name,
        key: r.case.key,
        expected: { outcome: r.case.expect, failed_check: r.case.failed_check, reason: r.case.reason },
        got: r.got,
        same: r.same,
        detail: r.detail,
      })),
    );
  else {
    out(
      table([
        ['CASE', 'KEY', 'EXPECTED', 'GOT', 'RESULT'],
        ...results.map((r) => [
          showUntrusted(r.case.name, 60),
          r.case.key ?? '-',
          shown(r.case.expect, r.case.failed_check, r.case.reason),
          shown(r.got.outcome, r.got.failed_check, r.case.reason === null ? null : r.got.reason),
          r.same ? 'same' : `DIFFERS: ${showUntrusted(r.detail ?? '', 200)}`,
        ]),
      ]),
    );
    out(`${String(results.length)} cases under ${cfg.source ?? 'the config'}: ${String(differ)} differ`);
  }
  return differ > 0 ? 1 : 0;
}

export async function policyReplay(args: ParsedArgs, now = nowSeconds()): Promise<number> {
  const sinceText = option(args, 'since') ?? '7d';
  const since = parseSince(sinceText, now) ?? fail(`--since takes 7d, 24h, 30m or a date, not ${sinceText}`);
  const cfg: SignerConfig = config(args);
  const entries = await withLedger(cfg, async (ledger) => {
    const kept: AuditEntry[] = [];
    // The intents too (a day further back: a final can follow its intent by up to a day), since a sign's dollar
    // value is the one its intent recorded.
    for await (const e of ledger.entries())
      if (
        (e.command === 'sign' && e.ts >= since - SPEND_WINDOW_S) ||
        (e.command === 'sign-intent' && e.ts >= since - 2 * SPEND_WINDOW_S)
      )
        kept.push(e);
    return kept;
  });
  const rows = replaySigns(entries, cfg.keys, cfg.cluster, since);
  const refused = rows.filter((r) => r.refusal !== null);
  if (args.options.get('json') === true) outJson(rows);
  else {
    out(
      table([
        ['TIME', 'KEY', 'SIGNATURE', 'WAS', 'USD', 'UNDER THE NEW POLICY'],
        ...rows.map((r: ReplayRow) => [
          new Date(r.ts * 1000).toISOString(),
          showUntrusted(r.key, 64),
          r.signature ?? '-',
          r.was,
          r.usd_value === null ? '-' : `$${r.usd_value}`,
          r.refusal === null ? 'allowed' : `REFUSED ${r.refusal.check} (${r.refusal.reason}): ${r.refusal.message}`,
        ]),
      ]),
    );
    out(
      `${String(rows.length)} signs since ${new Date(since * 1000).toISOString()} judged under ${cfg.source ?? 'the config'} (no new simulation, dollars as recorded at each sign; SOL destinations are not in the ledger): ${String(refused.length)} would be refused`,
    );
  }
  return refused.length > 0 ? 1 : 0;
}
