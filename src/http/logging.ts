/**
 * The service's logger: pino JSON on stderr, written as each line is logged (an operator tailing the log sees a
 * sign when it happens; the write itself is asynchronous, so the event loop never waits on it). Human-readable
 * through pino-pretty when SIGNER_LOG_PRETTY=1 or stderr is a terminal; pino-pretty is an optional dependency, and
 * without it the lines stay JSON after one notice. The redaction list covers the secret-bearing paths in case a
 * caller logs an object carrying them.
 */
import { pino, type DestinationStream, type Logger } from 'pino';
import type { SignerConfig } from '../config/types';
import { errorMessage } from '../util/errors';

export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'headers.cookie',
  'authorization',
  'partial_signers',
  '*.partial_signers',
  'payload.partial_signers',
  '*.payload.partial_signers',
  'ledger.url',
  'ledger.urls',
];

/** Pretty lines when asked for, or when a person is reading the terminal the log goes to. */
export function wantsPrettyLogs(env: NodeJS.ProcessEnv, logIsTty: boolean): boolean {
  if (env.SIGNER_LOG_PRETTY === '1') return true;
  if (env.SIGNER_LOG_PRETTY === '0') return false;
  return logIsTty;
}

/** pino-pretty writing to stderr, or null (with a notice on stderr) when the optional package is not installed. */
function prettyStderr(): DestinationStream | null {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- an optional dependency, loaded only when wanted
    const pretty = require('pino-pretty') as typeof import('pino-pretty');
    return pretty({ destination: 2, sync: false, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service' });
  } catch (e) {
    process.stderr.write(`log: pino-pretty is not installed (${errorMessage(e)}); writing JSON lines\n`);
    return null;
  }
}

export function createLogger(
  level: SignerConfig['log_level'],
  destination?: DestinationStream,
  env: NodeJS.ProcessEnv = process.env,
): Logger {
  const dest =
    destination ??
    (wantsPrettyLogs(env, process.stderr.isTTY) ? prettyStderr() : null) ??
    pino.destination({ dest: 2, sync: false });
  return pino(
    {
      level,
      base: { service: 'sa-forge-signer' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.epochTime,
    },
    dest,
  );
}

/** Resolves once every line logged so far is written (before the process exits). */
export function flushLog(logger: Logger): Promise<void> {
  return new Promise((resolve) => {
    logger.flush(() => resolve());
  });
}
