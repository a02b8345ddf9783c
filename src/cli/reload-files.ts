/**
 * How `sa-forge-signer reload` gets its answer from the running service. The CLI finds the service through the
 * state directory's lock (cli/service-lock.ts), writes a request id to `reload-request.json`, sends SIGHUP and
 * waits for `reload-result.json` to carry that id. No listener is opened for it: whoever may signal the service's
 * process and write its 0700 state directory is the operator already, and a plain `kill -HUP` reloads the same
 * way (its answer goes to the log and to the result file).
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { ReloadResult } from '../signer/reload';
import { SignerError } from '../util/errors';

export const REQUEST_FILE = 'reload-request.json';
export const RESULT_FILE = 'reload-result.json';

export interface ReloadAnswer extends ReloadResult {
  /** The request this answers (null: a SIGHUP without a request file). */
  request: string | null;
  at: string;
}

function writeWhole(file: string, value: unknown): void {
  const tmp = `${file}.${String(process.pid)}`;
  fs.writeFileSync(tmp, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  fs.renameSync(tmp, file);
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as unknown;
  } catch {
    return null;
  }
}

/** The service: which request a SIGHUP answers (the id the CLI wrote), then removes it. */
export function takeRequest(stateDir: string): string | null {
  const file = path.join(stateDir, REQUEST_FILE);
  const doc = readJson(file);
  fs.rmSync(file, { force: true });
  return typeof doc === 'object' && doc !== null && 'id' in doc && typeof doc.id === 'string' ? doc.id : null;
}

export function writeAnswer(stateDir: string, request: string | null, result: ReloadResult): void {
  const answer: ReloadAnswer = { ...result, request, at: new Date().toISOString() };
  writeWhole(path.join(stateDir, RESULT_FILE), answer);
}

/** The CLI: asks the service `pid` to reload and waits for its answer. */
export async function requestReload(stateDir: string, pid: number, timeoutMs: number): Promise<ReloadAnswer> {
  const id = randomUUID();
  writeWhole(path.join(stateDir, REQUEST_FILE), { id });
  process.kill(pid, 'SIGHUP');
  const resultFile = path.join(stateDir, RESULT_FILE);
  const deadline = Date.now() + timeoutMs;
  // The service answers within its RPC timeout (the mints are read from the chain); the file is polled, not
  // watched, because a rename onto it is not reported the same way on every platform.
  while (Date.now() < deadline) {
    const doc = readJson(resultFile) as ReloadAnswer | null;
    if (doc !== null && doc.request === id) return doc;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new SignerError(
    'internal',
    `the service (pid ${String(pid)}) did not answer the reload within ${String(timeoutMs / 1000)} s; its log says why`,
  );
}
