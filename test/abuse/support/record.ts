/**
 * What the abuse suites leave for the summary and the secret-hygiene scan, as files under one folder (the jest
 * workers are separate processes): the figures each suite measured, every artefact the signer produced (logs,
 * reports, errors, metrics, ledger rows) and every secret the suites handed to it (keys, tokens, partial signers,
 * RPC credentials). `test/abuse/run.js` points ABUSE_OUT at a fresh folder; a suite run on its own writes to
 * .tmp/abuse.
 */
import fs from 'node:fs';
import path from 'node:path';
import { secretForms } from '../../support/secrets';

export const OUT = path.resolve(process.env.ABUSE_OUT ?? path.join(__dirname, '../../../.tmp/abuse'));
const FIGURES = path.join(OUT, 'figures');
const ARTEFACTS = path.join(OUT, 'artefacts');
const SECRETS = path.join(OUT, 'secrets');

function ensure(dir: string): string {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

const safe = (name: string): string => name.replace(/[^a-z0-9_.-]+/gi, '_');

/** Merges figures into `<suite>.json` (numbers add up over calls, other values are replaced). */
export function recordFigures(suite: string, figures: Record<string, number | string | boolean>): void {
  const file = path.join(ensure(FIGURES), `${safe(suite)}.json`);
  const current = fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>) : {};
  for (const [k, v] of Object.entries(figures)) {
    const was = current[k];
    current[k] = typeof v === 'number' && typeof was === 'number' ? was + v : v;
  }
  fs.writeFileSync(file, JSON.stringify(current, null, 2));
}

/** A class's summary figures (support/class-tally.ts): counts add up over runs of the class, the delay is the worst. */
export function recordClassFigures(
  suite: string,
  figures: {
    requests: number;
    status_5xx: number;
    event_loop_max_ms: number;
    ledger_bytes: number;
    caps_passed: number;
  },
): void {
  const file = path.join(ensure(FIGURES), `class.${safe(suite)}.json`);
  const was = fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as typeof figures) : null;
  const merged = was
    ? {
        requests: was.requests + figures.requests,
        status_5xx: was.status_5xx + figures.status_5xx,
        event_loop_max_ms: Math.max(was.event_loop_max_ms, figures.event_loop_max_ms),
        ledger_bytes: was.ledger_bytes + figures.ledger_bytes,
        caps_passed: was.caps_passed + figures.caps_passed,
      }
    : figures;
  fs.writeFileSync(file, JSON.stringify(merged, null, 2));
}

export function readFigures(): Record<string, Record<string, unknown>> {
  if (!fs.existsSync(FIGURES)) return {};
  const out: Record<string, Record<string, unknown>> = {};
  for (const f of fs.readdirSync(FIGURES))
    if (f.endsWith('.json'))
      out[f.slice(0, -5)] = JSON.parse(fs.readFileSync(path.join(FIGURES, f), 'utf8')) as Record<string, unknown>;
  return out;
}

export type ArtefactKind = 'log' | 'report' | 'error' | 'metrics' | 'ledger' | 'response';

/** Appends text the signer produced to `<suite>.<kind>.txt`, for the secret scan at the end. */
export function recordArtefact(suite: string, kind: ArtefactKind, text: string): void {
  if (text.length === 0) return;
  fs.appendFileSync(
    path.join(ensure(ARTEFACTS), `${safe(suite)}.${kind}.txt`),
    text.endsWith('\n') ? text : `${text}\n`,
  );
}

/** A buffered recorder for hot loops: one append per flush instead of per artefact. */
export class ArtefactBuffer {
  private readonly parts = new Map<ArtefactKind, string[]>();
  private size = 0;

  constructor(private readonly suite: string) {}

  add(kind: ArtefactKind, text: string): void {
    let list = this.parts.get(kind);
    if (!list) this.parts.set(kind, (list = []));
    list.push(text);
    this.size += text.length;
    if (this.size > 4 * 1024 * 1024) this.flush();
  }

  flush(): void {
    for (const [kind, list] of this.parts) recordArtefact(this.suite, kind, list.join('\n'));
    this.parts.clear();
    this.size = 0;
  }
}

export interface SecretEntry {
  label: string;
  forms: string[];
}

/** The forms a string secret (a token, an RPC credential) could leak in. */
export function stringSecretForms(secret: string): string[] {
  const buf = Buffer.from(secret, 'utf8');
  const forms = new Set([
    secret,
    buf.toString('base64'),
    buf.toString('base64url'),
    buf.toString('hex'),
    encodeURIComponent(secret),
  ]);
  return [...forms].map((f) => (f.length > 24 ? f.slice(0, 24) : f));
}

/** Registers secrets the suite gave the signer (key bytes or strings); the scan looks for every form. */
export function recordSecrets(suite: string, secrets: { label: string; value: Uint8Array | string }[]): void {
  if (secrets.length === 0) return;
  const entries: SecretEntry[] = secrets.map((s) => ({
    label: s.label,
    forms: typeof s.value === 'string' ? stringSecretForms(s.value) : secretForms(s.value),
  }));
  const file = path.join(ensure(SECRETS), `${safe(suite)}.jsonl`);
  fs.appendFileSync(file, entries.map((e) => JSON.stringify(e)).join('\n') + '\n', { mode: 0o600 });
}

export function readSecrets(): SecretEntry[] {
  if (!fs.existsSync(SECRETS)) return [];
  const out: SecretEntry[] = [];
  for (const f of fs.readdirSync(SECRETS)) {
    for (const line of fs.readFileSync(path.join(SECRETS, f), 'utf8').split('\n'))
      if (line.trim()) out.push(JSON.parse(line) as SecretEntry);
  }
  return out;
}

export function artefactFiles(): string[] {
  if (!fs.existsSync(ARTEFACTS)) return [];
  return fs.readdirSync(ARTEFACTS).map((f) => path.join(ARTEFACTS, f));
}
