/**
 * The operator CLI's commands, the options each takes, their usage lines and what they do: one table, so parsing,
 * "did you mean" hints, the check that an option belongs to the command it was given with, the usage an error
 * prints and the help's list of commands all read the same truth.
 */
import { SignerError } from '../util/errors';
import { didYouMean } from '../util/did-you-mean';
import type { OptionSpec, ParsedArgs } from './args';

/**
 * One way to call a command: its usage line (without the program's name), as errors and the help print it, and what
 * it does, as the help prints it beside that line.
 */
export interface CommandForm {
  /** What {@link usageOf} finds it by: the command's name, unless the command has several forms. */
  name?: string;
  usage: string;
  /** One paragraph: the help wraps it. */
  does: string;
  /**
   * The options of a form that its own parser reads (the words after a pass-through command such as `localnet`);
   * the command's own lists cover every other form.
   */
  values?: readonly string[];
  flags?: readonly string[];
}

export interface CommandSpec {
  /** `key show`, `check`, … */
  name: string;
  values: readonly string[];
  flags: readonly string[];
  /** Usually one; several where one command takes distinct sets of arguments (`token new` with `--biscuit`). */
  forms: readonly CommandForm[];
}

const GLOBAL_VALUES = ['config'];
const GLOBAL_FLAGS = ['help', 'version'];

/** Every command, by its words, in the order the help lists them. `--json` is accepted by every read command. */
export const COMMANDS: readonly CommandSpec[] = [
  {
    name: 'key new',
    values: ['class', 'store'],
    flags: [],
    forms: [
      {
        usage: 'key new NAME --class session|wallet|biscuit_root [--store file|encrypted|pkcs11]',
        does: "create a key in its store (file: a 0600 keypair file; encrypted: an age file; pkcs11: inside the HSM token); prints the pubkey, config snippet on stderr (docs/keys.md); biscuit_root: the credentials' root key, never a signing key, not pkcs11 (docs/credentials.md)",
      },
    ],
  },
  {
    name: 'key import',
    values: ['class', 'store', 'from'],
    flags: [],
    forms: [
      {
        usage:
          'key import NAME --from KEYPAIR.json --class session|wallet|biscuit_root [--store file|encrypted|pkcs11]',
        does: 'move a Solana keypair file into a store; then delete the plaintext file',
      },
    ],
  },
  {
    name: 'key list',
    values: [],
    flags: ['json'],
    forms: [{ usage: 'key list [--json]', does: 'every configured key: name, store, class, approval, pubkey, halted' }],
  },
  {
    name: 'key show',
    values: [],
    flags: ['json'],
    forms: [
      {
        usage: 'key show NAME [--json]',
        does: 'name, pubkey, class, approval, profile, store and its health, whether the key opens, balance, halt',
      },
    ],
  },
  {
    name: 'key fund',
    values: ['zink', 'from', 'out'],
    flags: [],
    forms: [
      {
        usage: 'key fund NAME --zink AMOUNT [--from KEY|ADDRESS] [--out FILE]',
        does: 'on the embedded chain: airdrop AMOUNT now; elsewhere: build the unsigned transfer payload from --from that funds NAME',
      },
    ],
  },
  {
    name: 'key destroy',
    values: [],
    flags: ['force'],
    forms: [
      {
        usage: 'key destroy NAME [--force]',
        does: "overwrite and delete a key file or age file, or destroy the key's objects in the HSM token; unless its balance is known to be 0, asks you to type the key name (--force skips that)",
      },
    ],
  },
  {
    name: 'token new',
    values: ['out', 'keys', 'ttl', 'per-day-lamports'],
    flags: ['biscuit'],
    forms: [
      { usage: 'token new NAME --out FILE', does: 'create a bearer token in FILE (0600); prints its sha256' },
      {
        name: 'token new --biscuit',
        usage: 'token new NAME --biscuit --keys K1,K2 [--ttl 7d] [--per-day-lamports N] --out FILE',
        does: "issue a root credential (docs/credentials.md) in FILE (0600), signed by serve.credentials' root key; prints its revocation id and config lines",
      },
    ],
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
    forms: [
      {
        usage:
          'token narrow --from FILE --out FILE [--keys K1,K2] [--tools check,sign] [--mode sign_only|check] [--ttl 1h] [--per-tx-lamports N] [--destinations A,B] [--per-day-lamports N] [--per-tx-usd 5.00] [--per-day-usd 20.00] [--per-tx-token MINT=UNITS,...] [--root-public-key ed25519/HEX]',
        does: "offline: a narrower credential in FILE (a block of checks added); prints the block's revocation id (--root-public-key without a config)",
      },
    ],
  },
  {
    name: 'token revoke',
    values: ['root-public-key'],
    flags: [],
    forms: [
      {
        usage: 'token revoke REVOCATION_ID|NAME|FILE [--root-public-key ed25519/HEX]',
        does: 'the serve.credentials.revoked list with that block added (a name: its root; a file: its last block), to put in the config before reload',
      },
    ],
  },
  {
    name: 'check',
    values: ['key'],
    flags: [],
    forms: [{ usage: 'check [--key KEY] FILE|-', does: 'run every check and a simulation; prints the JSON report' }],
  },
  {
    name: 'sign',
    values: ['key', 'intent'],
    flags: [],
    forms: [
      {
        usage: 'sign [--key KEY] [--intent TEXT] FILE|-',
        does: 'check, simulate, sign, send and confirm; prints the JSON report',
      },
    ],
  },
  {
    name: 'audit verify',
    values: ['file', 'head'],
    flags: ['json'],
    forms: [
      {
        usage: 'audit verify [--file FILE.jsonl [--head SEQ:HASH]] [--json]',
        does: 'verify the hash chain of the ledger against its head record (or an exported file, against the head its export printed)',
      },
    ],
  },
  {
    name: 'audit tail',
    values: ['n'],
    flags: ['json'],
    forms: [{ usage: 'audit tail [-n N] [--json]', does: 'the last N audit entries (default 10)' }],
  },
  {
    name: 'audit export',
    values: ['out'],
    flags: [],
    forms: [
      {
        usage: 'audit export --out FILE.jsonl',
        does: 'write every audit entry as JSON lines (0600); prints the head SEQ:HASH',
      },
    ],
  },
  {
    name: 'halt',
    values: ['reason'],
    flags: ['all'],
    forms: [{ usage: 'halt KEY|--all --reason TEXT', does: 'stop all signing with a key now, in every replica' }],
  },
  { name: 'resume', values: [], flags: [], forms: [{ usage: 'resume KEY', does: 'release a halted key' }] },
  {
    name: 'approvals list',
    values: [],
    flags: ['json'],
    forms: [
      {
        usage: 'approvals list [--json]',
        does: 'signs waiting for an operator, with the amounts the signer computed and the votes so far',
      },
    ],
  },
  {
    name: 'approvals approve',
    values: ['as'],
    flags: [],
    forms: [
      {
        usage: 'approvals approve ID [--as NAME]',
        does: "vote for one; with operators configured, --as names the operator voting (one of the key's approvers)",
      },
    ],
  },
  {
    name: 'approvals reject',
    values: ['as'],
    flags: [],
    forms: [
      {
        usage: 'approvals reject ID [--as NAME]',
        does: "vote against one; with operators configured, --as names the operator voting (one of the key's approvers)",
      },
    ],
  },
  {
    name: 'operator enroll',
    values: [],
    flags: [],
    forms: [
      {
        usage: 'operator enroll NAME',
        does: 'a one-time link (printed on stdout) where the operator registers a passkey for the console (serve.operator); NAME must be under operators',
      },
    ],
  },
  {
    name: 'operator list',
    values: [],
    flags: ['json'],
    forms: [{ usage: 'operator list [--json]', does: 'operators, their roles and passkeys' }],
  },
  {
    name: 'operator revoke',
    values: [],
    flags: [],
    forms: [
      {
        usage: 'operator revoke NAME',
        does: "remove the operator's passkeys: their console sessions stop working",
      },
    ],
  },
  {
    name: 'notify list',
    values: ['n', 'status'],
    flags: ['json'],
    forms: [
      {
        usage: 'notify list [-n N] [--status pending|delivered|failed] [--json]',
        does: 'webhook notifications, newest first: event, key, hook, delivered, pending (attempts, next try) or failed and why (docs/notifications.md)',
      },
    ],
  },
  {
    name: 'locks list',
    values: [],
    flags: ['json'],
    forms: [{ usage: 'locks list [--json]', does: 'per-key locks, their holders and leases' }],
  },
  {
    name: 'locks clear',
    values: [],
    flags: ['force'],
    forms: [{ usage: 'locks clear KEY [--force]', does: 'free a stale key lock (--force: a live one)' }],
  },
  {
    name: 'reload',
    values: [],
    flags: ['json'],
    forms: [
      {
        usage: 'reload [--json]',
        does: 'the running service reads its config again: keys and caps change without a restart, or nothing changes and it says why (exit 1)',
      },
    ],
  },
  {
    name: 'policy test',
    values: [],
    flags: ['json'],
    forms: [
      {
        usage: 'policy test CASES.yaml [--json]',
        does: "each case's payload checked against the chain under the config (--config NEW.yaml to try one); a table, exit 1 when a case differs",
      },
    ],
  },
  {
    name: 'policy replay',
    values: ['since'],
    flags: ['json'],
    forms: [
      {
        usage: 'policy replay [--since 7d] [--json]',
        does: "the audit log's signs judged again under the config's caps, destinations and programs, no new simulation; exit 1 if any refused",
      },
    ],
  },
  {
    // Everything after `localnet` is its sub-commands' (ALL_OPTIONS.passThrough): each form lists its own options.
    name: 'localnet',
    values: [],
    flags: [],
    forms: [
      {
        usage:
          'localnet [--listen HOST:PORT] [--fund ADDRESS=LAMPORTS ...] [--block-ms N] [--confirm-blocks N] [--controls]',
        does: 'run the embedded LiteSVM chain as a JSON-RPC endpoint',
        values: ['listen', 'fund', 'block-ms', 'confirm-blocks'],
        flags: ['controls'],
      },
      {
        name: 'localnet mint',
        usage: 'localnet mint [--key KEY] [--decimals N] [--amount UNITS] [--per-tx UNITS] [--per-day UNITS]',
        does: 'on the running embedded chain: a test token for KEY (default demo); prints the policy lines to add under keys.KEY, then reload',
        values: ['key', 'decimals', 'amount', 'per-tx', 'per-day'],
        flags: [],
      },
      {
        name: 'localnet price set',
        usage: 'localnet price set ASSET PRICE [--conf DOLLARS] [--age SECONDS] [--account ADDRESS] [--feed-id HEX]',
        does: 'on the running embedded chain: ASSET (SOL or a mint) at PRICE dollars in its Pyth account (that of prices.feeds, else --account and --feed-id); prints the prices lines (docs/pricing.md)',
        values: ['conf', 'age', 'account', 'feed-id'],
        flags: [],
      },
      {
        name: 'localnet transfer',
        usage: 'localnet transfer --key KEY --zink AMOUNT [--to ADDRESS] [--out FILE]',
        does: 'an unsigned transfer payload from KEY (to its first allowed destination) to try its caps with check and sign',
        values: ['key', 'zink', 'to', 'out'],
        flags: [],
      },
    ],
  },
  {
    name: 'treasury plan',
    values: [],
    flags: ['json'],
    forms: [
      {
        usage: 'treasury plan NAME [--json]',
        does: "the unsigned ApproveChecked (base64) giving KEY its per_day allowance on each treasury account, for the owner's wallet to sign (docs/treasury.md)",
      },
    ],
  },
  {
    name: 'treasury submit',
    values: [],
    flags: ['json'],
    forms: [
      {
        usage: 'treasury submit FILE|- [--json]',
        does: 'send a signed allowance after checking it is exactly the plan',
      },
    ],
  },
  { name: 'help', values: [], flags: [], forms: [{ usage: 'help', does: 'this list (also --help)' }] },
];

/** Every form of every command, named, in the table's order: what the help lists and usageOf finds. */
export const FORMS: readonly (CommandForm & { name: string; command: CommandSpec })[] = COMMANDS.flatMap((command) =>
  command.forms.map((f) => ({ ...f, name: f.name ?? command.name, command })),
);

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

function formOf(name: string): (typeof FORMS)[number] {
  const form = FORMS.find((f) => f.name === name);
  if (form === undefined) throw new Error(`no command form ${JSON.stringify(name)}`);
  return form;
}

/**
 * The usage line of one or more forms as errors print it, from the table: `sa-forge-signer token narrow --from FILE
 * …`, or `sa-forge-signer locks list [--json] | locks clear KEY [--force]`.
 */
export function usageOf(...names: readonly string[]): string {
  return `sa-forge-signer ${names.map((n) => formOf(n).usage).join(' | ')}`;
}

/** The options of a form that its own parser reads (see {@link CommandForm.values}), for that parser. */
export function ownOptionsOf(name: string): OptionSpec {
  const form = formOf(name);
  if (form.values === undefined && form.flags === undefined)
    throw new Error(`command form ${JSON.stringify(name)} has no options of its own`);
  return { values: form.values ?? [], flags: form.flags ?? [] };
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
        `${spec.name} does not take ${name.length === 1 ? '-' : '--'}${name} (${takes.length > 0 ? `it takes ${takes.join(', ')}` : 'it takes no options'}): ${usageOf(...spec.forms.map((f) => f.name ?? spec.name))}`,
      );
    }
  }
  return { spec, argsFrom };
}
