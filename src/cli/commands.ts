/**
 * The operator CLI's commands and the options each takes: one table, so parsing, "did you mean" hints and the
 * check that an option belongs to the command it was given with all read the same truth.
 */
import { SignerError } from '../util/errors';
import { didYouMean } from '../util/did-you-mean';
import type { OptionSpec, ParsedArgs } from './args';

export interface CommandSpec {
  /** `key show`, `check`, … */
  name: string;
  values: readonly string[];
  flags: readonly string[];
  usage: string;
}

const GLOBAL_VALUES = ['config'];
const GLOBAL_FLAGS = ['help', 'version'];

/** Every command, by its words. `--json` is accepted by every read command. */
export const COMMANDS: readonly CommandSpec[] = [
  {
    name: 'key new',
    values: ['class', 'store'],
    flags: [],
    usage: 'key new NAME --class session|wallet|biscuit_root [--store file|encrypted|pkcs11]',
  },
  {
    name: 'key import',
    values: ['class', 'store', 'from'],
    flags: [],
    usage: 'key import NAME --from KEYPAIR.json --class session|wallet|biscuit_root [--store file|encrypted|pkcs11]',
  },
  { name: 'key list', values: [], flags: ['json'], usage: 'key list [--json]' },
  { name: 'key show', values: [], flags: ['json'], usage: 'key show NAME [--json]' },
  {
    name: 'key fund',
    values: ['zink', 'from', 'out'],
    flags: [],
    usage: 'key fund NAME --zink AMOUNT [--from KEY|ADDRESS] [--out FILE]',
  },
  { name: 'key destroy', values: [], flags: ['force'], usage: 'key destroy NAME [--force]' },
  {
    name: 'token new',
    values: ['out', 'keys', 'ttl', 'per-day-lamports'],
    flags: ['biscuit'],
    usage:
      'token new NAME --out FILE | token new NAME --biscuit --keys K1,K2 [--ttl 7d] [--per-day-lamports N] --out FILE',
  },
  {
    name: 'token narrow',
    values: [
      'from',
      'out',
      'keys',
      'tools',
      'mode',
      'ttl',
      'per-tx-lamports',
      'destinations',
      'per-day-lamports',
      'per-tx-usd',
      'per-day-usd',
      'per-tx-token',
      'root-public-key',
    ],
    flags: [],
    usage:
      'token narrow --from FILE --out FILE [--keys K1,K2] [--tools check,sign] [--mode sign_only|check] [--ttl 1h] [--per-tx-lamports N] [--destinations A,B] [--per-day-lamports N] [--per-tx-usd 5.00] [--per-day-usd 20.00] [--per-tx-token MINT=UNITS,...] [--root-public-key ed25519/HEX]',
  },
  {
    name: 'token revoke',
    values: ['root-public-key'],
    flags: [],
    usage: 'token revoke REVOCATION_ID|NAME|FILE [--root-public-key ed25519/HEX]',
  },
  { name: 'check', values: ['key'], flags: [], usage: 'check [--key KEY] FILE|-' },
  { name: 'sign', values: ['key', 'intent'], flags: [], usage: 'sign [--key KEY] [--intent TEXT] FILE|-' },
  {
    name: 'audit verify',
    values: ['file', 'head'],
    flags: ['json'],
    usage: 'audit verify [--file FILE.jsonl [--head SEQ:HASH]] [--json]',
  },
  { name: 'audit tail', values: ['n'], flags: ['json'], usage: 'audit tail [-n N] [--json]' },
  { name: 'audit export', values: ['out'], flags: [], usage: 'audit export --out FILE.jsonl' },
  { name: 'halt', values: ['reason'], flags: ['all'], usage: 'halt KEY|--all --reason TEXT' },
  { name: 'resume', values: [], flags: [], usage: 'resume KEY' },
  { name: 'approvals list', values: [], flags: ['json'], usage: 'approvals list [--json]' },
  { name: 'approvals approve', values: ['as'], flags: [], usage: 'approvals approve ID [--as NAME]' },
  { name: 'approvals reject', values: ['as'], flags: [], usage: 'approvals reject ID [--as NAME]' },
  { name: 'operator enroll', values: [], flags: [], usage: 'operator enroll NAME' },
  { name: 'operator list', values: [], flags: ['json'], usage: 'operator list [--json]' },
  { name: 'operator revoke', values: [], flags: [], usage: 'operator revoke NAME' },
  {
    name: 'notify list',
    values: ['n', 'status'],
    flags: ['json'],
    usage: 'notify list [-n N] [--status pending|delivered|failed] [--json]',
  },
  { name: 'locks list', values: [], flags: ['json'], usage: 'locks list [--json]' },
  { name: 'locks clear', values: [], flags: ['force'], usage: 'locks clear KEY [--force]' },
  { name: 'reload', values: [], flags: ['json'], usage: 'reload [--json]' },
  { name: 'policy test', values: [], flags: ['json'], usage: 'policy test CASES.yaml [--json]' },
  { name: 'policy replay', values: ['since'], flags: ['json'], usage: 'policy replay [--since 7d] [--json]' },
  {
    name: 'localnet',
    values: [],
    flags: [],
    usage:
      'localnet [--listen HOST:PORT] [--fund ADDRESS=LAMPORTS ...] [--block-ms N] [--confirm-blocks N] | localnet mint [--key KEY] [--amount UNITS] | localnet price set ASSET PRICE [--conf DOLLARS] [--age SECONDS] | localnet transfer --key KEY --zink AMOUNT [--to ADDRESS] [--out FILE]',
  },
  { name: 'treasury plan', values: [], flags: ['json'], usage: 'treasury plan NAME [--json]' },
  { name: 'treasury submit', values: [], flags: ['json'], usage: 'treasury submit FILE|- [--json]' },
  { name: 'help', values: [], flags: [], usage: 'help' },
];

/** What the first pass of the parser needs: every option any command takes, and where localnet's own begin. */
export const ALL_OPTIONS: OptionSpec = {
  values: [...new Set([...GLOBAL_VALUES, ...COMMANDS.flatMap((c) => c.values)])],
  flags: [...new Set([...GLOBAL_FLAGS, ...COMMANDS.flatMap((c) => c.flags)])],
  passThrough: ['localnet'],
};

const TOP_WORDS = [...new Set(COMMANDS.map((c) => c.name.split(' ')[0] ?? ''))];

function subWords(top: string): string[] {
  return COMMANDS.filter((c) => c.name.startsWith(`${top} `)).map((c) => c.name.slice(top.length + 1));
}

/** A command's usage line as errors print it, from the table: `sa-forge-signer token narrow --from FILE …`. */
export function usageOf(name: string): string {
  const spec = COMMANDS.find((c) => c.name === name);
  if (spec === undefined) throw new Error(`usageOf: no command ${JSON.stringify(name)}`);
  return `sa-forge-signer ${spec.usage}`;
}

/**
 * The command named by the first positional words, with its arguments' offset. An unknown or misspelled word is
 * an error naming the nearest command; an option the command does not take is an error listing those it does.
 */
export function resolveCommand(args: ParsedArgs): { spec: CommandSpec; argsFrom: number } {
  const top = args.positional[0] ?? 'help';
  if (!TOP_WORDS.includes(top)) {
    throw new SignerError(
      'request_invalid',
      `unknown command ${JSON.stringify(top)}${didYouMean(top, TOP_WORDS, (w) => JSON.stringify(w))}; see sa-forge-signer --help`,
    );
  }
  const subs = subWords(top);
  let spec: CommandSpec | undefined;
  let argsFrom = 1;
  if (subs.length === 0) spec = COMMANDS.find((c) => c.name === top);
  else {
    // `approvals` alone lists what is waiting, the most common read.
    const sub = args.positional[1] ?? (top === 'approvals' ? 'list' : undefined);
    if (sub === undefined || !subs.includes(sub)) {
      const hint = sub === undefined ? '' : didYouMean(sub, subs, (w) => JSON.stringify(`${top} ${w}`));
      throw new SignerError(
        'request_invalid',
        `${sub === undefined ? 'missing' : `unknown`} ${top} command${sub === undefined ? '' : ` ${JSON.stringify(sub)}`}${hint}: sa-forge-signer ${top} ${subs.join('|')}`,
      );
    }
    spec = COMMANDS.find((c) => c.name === `${top} ${sub}`);
    argsFrom = 2;
  }
  if (!spec) throw new SignerError('internal', `no command table entry for ${top}`);
  const allowed = [...GLOBAL_VALUES, ...GLOBAL_FLAGS, ...spec.values, ...spec.flags];
  for (const name of args.options.keys()) {
    if (!allowed.includes(name)) {
      const takes = [...spec.values, ...spec.flags].map((o) => (o.length === 1 ? `-${o}` : `--${o}`));
      throw new SignerError(
        'request_invalid',
        `${spec.name} does not take ${name.length === 1 ? '-' : '--'}${name} (${takes.length > 0 ? `it takes ${takes.join(', ')}` : 'it takes no options'}): sa-forge-signer ${spec.usage}`,
      );
    }
  }
  return { spec, argsFrom };
}
