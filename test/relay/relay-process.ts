/**
 * The built relay (`node dist/src/cli/mcp.js`) as an MCP client launches it: a child process spoken to one JSON
 * line at a time on stdin, read one line at a time on stdout. Every stdout line is kept raw, so tests can assert
 * the framing (one message per line, nothing else) as well as the messages.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { BIN, ROOT } from '../support/cli';
import { stopChild } from '../support/children';

export const VERSION = '2026-07-28';
export const META = {
  'io.modelcontextprotocol/protocolVersion': VERSION,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'relay-test', version: '1.0.0' },
};

export type Message = Record<string, unknown> & {
  id?: unknown;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
};

/** The relay's own settings: only what a test passes reaches the child, never the caller's environment. */
const RELAY_ENV = new Set([
  'SIGNER_URL',
  'SIGNER_TOKEN',
  'SIGNER_TOKEN_FILE',
  'SIGNER_RELAY_TIMEOUT_MS',
  'SIGNER_RELAY_DRAIN_MS',
  'SIGNER_RELAY_MAX_LINE_BYTES',
]);

export class RelayProcess {
  readonly child: ChildProcess;
  /** Every stdout line as written (without its newline). */
  readonly lines: string[] = [];
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private partial = '';
  private waiters: (() => void)[] = [];

  constructor(env: Record<string, string | undefined>) {
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !RELAY_ENV.has(k)));
    this.child = spawn(process.execPath, [BIN.mcp], {
      cwd: ROOT,
      env: { ...clean, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child.stdout!.on('data', (d: Buffer) => {
      this.partial += d.toString('utf8');
      let nl: number;
      while ((nl = this.partial.indexOf('\n')) >= 0) {
        this.lines.push(this.partial.slice(0, nl));
        this.partial = this.partial.slice(nl + 1);
      }
      this.wake();
    });
    this.child.stderr!.on('data', (d: Buffer) => {
      this.stderr += d.toString('utf8');
      this.wake();
    });
    this.exited = new Promise((resolve) =>
      this.child.once('exit', (code, signal) => {
        this.wake();
        resolve({ code, signal });
      }),
    );
  }

  /** Parsed stdout messages (a line that is not JSON fails the test that reads it). */
  messages(): Message[] {
    return this.lines.map((l) => JSON.parse(l) as Message);
  }

  /** Any text after the last newline: must stay empty, every message ends its line. */
  unterminated(): string {
    return this.partial;
  }

  send(message: unknown): void {
    this.child.stdin!.write(`${JSON.stringify(message)}\n`);
  }

  sendRaw(text: string): void {
    this.child.stdin!.write(text);
  }

  request(id: string | number, method: string, params: Record<string, unknown> = {}): void {
    this.send({ jsonrpc: '2.0', id, method, params: { ...params, _meta: META } });
  }

  /** Sends a request and resolves with the reply for its id. */
  async call(
    id: string | number,
    method: string,
    params: Record<string, unknown> = {},
    timeoutMs = 30_000,
  ): Promise<Message> {
    this.request(id, method, params);
    return this.reply(id, timeoutMs);
  }

  async reply(id: unknown, timeoutMs = 30_000): Promise<Message> {
    let found: Message | undefined;
    await this.until(
      () => (found = this.messages().find((m) => JSON.stringify(m.id) === JSON.stringify(id))) !== undefined,
      timeoutMs,
      `a reply for id ${JSON.stringify(id)}`,
    );
    return found!;
  }

  async until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      if (Date.now() > deadline)
        throw new Error(
          `timed out waiting for ${what}; stdout: ${this.lines.join('\n').slice(-1000)}; stderr: ${this.stderr.slice(-1000)}`,
        );
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 50);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  async stderrMatches(pattern: RegExp, timeoutMs = 10_000): Promise<void> {
    await this.until(() => pattern.test(this.stderr), timeoutMs, `stderr matching ${pattern}`);
  }

  /** Closes stdin and waits for the process to exit. */
  async end(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    this.child.stdin!.end();
    return this.exited;
  }

  /** SIGKILL, then waits until the process is reaped: a test file ends with no child of its own still running. */
  async kill(): Promise<void> {
    await stopChild(this.child, 'SIGKILL');
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }
}
