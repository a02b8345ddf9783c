#!/usr/bin/env node
/**
 * sa-forge-signer-mcp: the stdio side of the signer. An MCP client starts it as a command; it relays each
 * message to the service's POST /mcp. It loads only node:http and the relay's own small modules (no Express,
 * engine, ledger or chain), so it answers its first message within moments of starting.
 */
import { loadRelayConfig, type RelayConfig } from '../relay/config';
import { LineSplitter } from '../relay/lines';
import { Relay } from '../relay/relay';
import { VERSION } from '../util/version';

const HELP = `sa-forge-signer-mcp ${VERSION}: the stdio relay of sa-forge-signer (MCP 2026-07-28)

An MCP client starts this command and speaks JSON-RPC to it, one message per line on stdin and stdout. Each
message is sent to the signer service (sa-forge-signer-serve) as a Streamable HTTP POST with the bearer token
and the MCP headers built from the message; each reply comes back as one line. Logs go to stderr only.

Usage:
  sa-forge-signer-mcp                 relay stdin/stdout to the service
  sa-forge-signer-mcp --help | --version

Environment:
  SIGNER_URL                  the service's MCP endpoint (default http://127.0.0.1:8790/mcp)
  SIGNER_TOKEN_FILE           file holding the bearer token (preferred: keeps it out of the environment)
  SIGNER_TOKEN                the bearer token itself, when no SIGNER_TOKEN_FILE is set
  SIGNER_RELAY_TIMEOUT_MS     per request (default 600000: a sign may wait minutes for approval and confirmation)
  SIGNER_RELAY_DRAIN_MS       after SIGTERM/SIGINT, how long running requests may finish (default 30000)
  SIGNER_RELAY_MAX_LINE_BYTES largest input message (default 4194304); a longer one is answered with an error

Shutdown: at end of input the relay finishes every request still running (each bounded by its timeout), then
exits 0. SIGTERM/SIGINT stop reading and give running requests SIGNER_RELAY_DRAIN_MS; any still running are then
aborted and answered with -32603 (a sign may still complete: check key_show). A second signal stops at once.

Example client entry:
  {"command": "sa-forge-signer-mcp", "env": {"SIGNER_TOKEN_FILE": "/path/to/agent.token"}}
`;

const log = (line: string): void => {
  process.stderr.write(`sa-forge-signer-mcp: ${line}\n`);
};

function main(argv: readonly string[]): void {
  if (argv.includes('--help') || argv.includes('-h')) return void process.stdout.write(HELP);
  if (argv.includes('--version')) return void process.stdout.write(`${VERSION}\n`);
  const unknown = argv.find((a) => a !== '');
  if (unknown !== undefined) {
    log(`unknown argument ${JSON.stringify(unknown)}; see --help`);
    process.exitCode = 2;
    return;
  }

  let config: RelayConfig;
  try {
    config = loadRelayConfig(process.env);
  } catch (e) {
    log(`error: ${(e as Error).message}`);
    process.exitCode = 2;
    return;
  }
  if (!config.url.ok) log(`error: ${config.url.problem}; every request will be answered with -32603`);
  if (!config.token.ok) log(`error: ${config.token.problem}; every request will be answered with -32603`);

  let stdoutBroken = false;
  const relay = new Relay(config, VERSION, {
    write: (line) => {
      if (!stdoutBroken) process.stdout.write(line);
    },
    log,
  });

  let exiting = false;
  const exit = (): void => {
    if (exiting) return;
    exiting = true;
    relay.close();
    // The empty write's callback runs once everything before it has been handed to the OS.
    if (stdoutBroken) process.exit(0);
    process.stdout.write('', () => process.exit(0));
  };

  // The client closed our stdout: nobody can read an answer, so stop now (closing the POSTs cancels them).
  process.stdout.on('error', () => {
    stdoutBroken = true;
    relay.abortAll("the client closed the relay's output");
    exit();
  });

  const splitter = new LineSplitter(config.maxLineBytes, (e) => {
    if (e.kind === 'line') relay.line(e.line);
    else relay.oversized(e.bytes, config.maxLineBytes, e.id);
  });
  process.stdin.on('data', (chunk: Buffer) => splitter.push(chunk));
  process.stdin.on('end', () => {
    splitter.end();
    const running = relay.inFlight();
    if (running > 0) log(`end of input: finishing ${running} request(s) in flight`);
    void relay.whenIdle().then(exit);
  });
  process.stdin.on('error', (e) => {
    log(`stdin: ${e.message}`);
    void relay.whenIdle().then(exit);
  });

  let signalled = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (signalled) {
      relay.abortAll(
        `the relay was stopped (${signal}) before the service answered; a sign may still complete: check key_show before retrying`,
      );
      exit();
      return;
    }
    signalled = true;
    process.stdin.pause();
    process.stdin.removeAllListeners('data');
    const running = relay.inFlight();
    if (running === 0) {
      exit();
      return;
    }
    log(`${signal}: finishing ${running} request(s) in flight, for up to ${config.drainMs} ms`);
    const timer = setTimeout(() => {
      relay.abortAll(
        `the relay was stopped (${signal}) before the service answered; a sign may still complete: check key_show before retrying`,
      );
      exit();
    }, config.drainMs);
    void relay.whenIdle().then(() => {
      clearTimeout(timer);
      exit();
    });
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

main(process.argv.slice(2));
