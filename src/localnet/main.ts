/**
 * `sa-forge-signer localnet [--listen 127.0.0.1:8899] [--fund ADDRESS=LAMPORTS ...] [--block-ms N] [--confirm-blocks N]
 *  [--controls]`
 * Runs the embedded chain until SIGTERM or SIGINT. The URL goes to stdout (for scripts), a readable line to stderr.
 * Its options and usage line are the CLI's command table's (src/cli/commands.ts).
 */
import { ownOptionsOf, usageOf } from '../cli/commands';
import { SignerError } from '../util/errors';
import { startLocalnet, type LocalnetOptions } from './server';

export function parseLocalnetArgs(argv: string[]): LocalnetOptions {
  const opts: LocalnetOptions & { fund: { address: string; lamports: number }[] } = {
    host: '127.0.0.1',
    port: 8899,
    fund: [],
  };
  const { values, flags } = ownOptionsOf('localnet');
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    // Only what the table lists is taken, so the usage line it prints names every option accepted here.
    if (!arg.startsWith('--') || ![...values, ...flags].includes(arg.slice(2))) throw usage(`unknown option ${arg}`);
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw usage(`${arg} needs a value`);
      return v;
    };
    switch (arg) {
      case '--listen': {
        const listen = value();
        const m = /^(\[[0-9a-fA-F:]+\]|[^:]+):(\d{1,5})$/.exec(listen);
        if (!m || Number(m[2]) > 65535) throw usage(`--listen takes HOST:PORT, not ${listen}`);
        opts.host = (m[1] ?? '').replace(/^\[|\]$/g, '');
        opts.port = Number(m[2]);
        break;
      }
      case '--fund': {
        const fund = value();
        const m = /^([1-9A-HJ-NP-Za-km-z]{32,44})=(\d+)$/.exec(fund);
        if (!m || !Number.isSafeInteger(Number(m[2]))) throw usage(`--fund takes ADDRESS=LAMPORTS, not ${fund}`);
        opts.fund.push({ address: m[1] ?? '', lamports: Number(m[2]) });
        break;
      }
      case '--block-ms': {
        const ms = value();
        if (!/^\d+$/.test(ms)) throw usage(`--block-ms takes a whole number of milliseconds, not ${ms}`);
        opts.blockIntervalMs = Number(ms);
        break;
      }
      case '--confirm-blocks': {
        const n = value();
        if (!/^[1-9]\d{0,5}$/.test(n)) throw usage(`--confirm-blocks takes a whole number of blocks ≥ 1, not ${n}`);
        opts.confirmAfterBlocks = Number(n);
        break;
      }
      case '--controls':
        opts.controls = true;
        break;
      default:
        throw usage(`unknown option ${arg}`);
    }
  }
  return opts;
}

function usage(problem: string): SignerError {
  return new SignerError('request_invalid', `localnet: ${problem}. Usage: ${usageOf('localnet')}`);
}

export async function runLocalnet(argv: string[]): Promise<void> {
  const localnet = await startLocalnet(parseLocalnetArgs(argv));
  process.stderr.write(`localnet listening on ${localnet.url} genesis ${localnet.genesisHash}\n`);
  process.stdout.write(`${localnet.url}\n`);
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      resolve();
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
  await localnet.close();
}
