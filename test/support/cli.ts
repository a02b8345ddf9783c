/** Runs the built binaries (dist/) as real processes, the way an operator or a client launches them. */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';

export const ROOT = path.resolve(__dirname, '../..');
export const BIN = {
  signer: path.join(ROOT, 'dist/src/cli/signer.js'),
  serve: path.join(ROOT, 'dist/src/cli/serve.js'),
  mcp: path.join(ROOT, 'dist/src/cli/mcp.js'),
};

export function assertBuilt(...bins: string[]): void {
  for (const file of bins.length > 0 ? bins : Object.values(BIN)) {
    if (!fs.existsSync(file)) throw new Error(`${file} is missing: run \`npm run build\` first (npm test does)`);
  }
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function run(
  bin: string,
  args: string[],
  opts: { input?: string; env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      env: { ...process.env, ...opts.env },
      cwd: opts.cwd ?? ROOT,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(opts.input ?? '');
  });
}

export function spawnBin(bin: string, args: string[], env: NodeJS.ProcessEnv = {}): ChildProcess {
  return spawn(process.execPath, [bin, ...args], {
    env: { ...process.env, ...env },
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

/** Resolves when the child's stderr (or stdout) has printed text matching `pattern`. */
export function waitForOutput(
  child: ChildProcess,
  pattern: RegExp,
  stream: 'stderr' | 'stdout' = 'stderr',
  timeoutMs = 20_000,
): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const source = stream === 'stderr' ? child.stderr! : child.stdout!;
    const timer = setTimeout(
      () => reject(new Error(`timed out waiting for ${pattern} in ${stream}; saw: ${seen.slice(-500)}`)),
      timeoutMs,
    );
    const onData = (d: Buffer) => {
      seen += d.toString();
      if (pattern.test(seen)) {
        clearTimeout(timer);
        source.off('data', onData);
        resolve(seen);
      }
    };
    source.on('data', onData);
    child.once('exit', () => {
      clearTimeout(timer);
      if (!pattern.test(seen)) reject(new Error(`process exited before ${pattern}; saw: ${seen.slice(-500)}`));
    });
  });
}

export function writeYaml(file: string, doc: unknown): void {
  fs.writeFileSync(file, YAML.stringify(doc), { mode: 0o600 });
}

/** Resolves with the address (host:port) a starting service prints once its MCP listener is up. */
export async function listeningAddress(child: ChildProcess, timeoutMs = 20_000): Promise<string> {
  const started = await waitForOutput(child, /serving on (\S+)/, 'stderr', timeoutMs);
  return /serving on (\S+)/.exec(started)![1]!;
}
