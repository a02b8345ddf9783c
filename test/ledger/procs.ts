/** Child processes for the cross-process ledger tests: a private build of the ledger and a worker to drive it. */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import * as path from 'node:path';
import type { LedgerConfig } from '../../src/config/types';

const ROOT = path.resolve(__dirname, '../..');
const WORKER = path.join(__dirname, 'fixtures/worker.js');

/**
 * Compiles src/ledger (and what it imports) into a folder of its own, so the worker runs the code under test
 * with plain `node`, and two test files building at once do not overwrite each other.
 */
export function buildLedger(tag: string): { openJs: string; cleanup: () => void } {
  const outDir = path.join(ROOT, '.tmp', `ledger-build-${tag}-${process.pid}`);
  execFileSync(
    process.execPath,
    [
      path.join(ROOT, 'node_modules/typescript/bin/tsc'),
      '-p',
      path.join(__dirname, 'fixtures/tsconfig.build.json'),
      '--outDir',
      outDir,
    ],
    { stdio: 'pipe' },
  );
  return {
    openJs: path.join(outDir, 'src/ledger/open.js'),
    cleanup: () => rmSync(outDir, { recursive: true, force: true }),
  };
}

export class Worker {
  readonly child: ChildProcess;
  readonly lines: string[] = [];
  stderr = '';
  private waiters: { match: (l: string) => boolean; resolve: () => void }[] = [];
  readonly exited: Promise<number | null>;

  constructor(openJs: string, cfg: LedgerConfig, args: string[]) {
    this.child = spawn(process.execPath, [WORKER, openJs, JSON.stringify(cfg), ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let buf = '';
    this.child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        this.lines.push(line);
        this.waiters = this.waiters.filter((w) => (w.match(line) ? (w.resolve(), false) : true));
      }
    });
    this.child.stderr!.on('data', (d: Buffer) => (this.stderr += d.toString()));
    this.exited = new Promise((resolve) => this.child.on('exit', (code) => resolve(code)));
  }

  /** Waits for a stdout line; fails with the worker's stderr if it exits first. */
  waitFor(match: (line: string) => boolean): Promise<void> {
    if (this.lines.some(match)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.waiters.push({ match, resolve });
      void this.exited.then((code) => reject(new Error(`worker exited (${code}) first: ${this.stderr}`)));
    });
  }

  /** The highest N of the "appended N" lines seen so far: every one of them was durable when printed. */
  lastAppended(): number {
    let n = 0;
    for (const l of this.lines) if (l.startsWith('appended ')) n = Math.max(n, Number(l.slice(9)));
    return n;
  }

  async kill(): Promise<void> {
    this.child.kill('SIGKILL');
    await this.exited; // reaped: no zombie left holding a pid
  }
}
