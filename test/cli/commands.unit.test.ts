/**
 * The operator CLI's command table (src/cli/commands.ts) is the one place a command's options, usage lines and
 * description are written: every option a command's parser accepts is in its usage line and every option a usage
 * line names is accepted, and the help lists every form of every command, laid out in its columns.
 */
import { parseArgs, type ParsedArgs } from '../../src/cli/args';
import { ALL_OPTIONS, COMMANDS, FORMS, ownOptionsOf, resolveCommand, usageOf } from '../../src/cli/commands';
import { commandList } from '../../src/cli/help';
import { parseLocalnetArgs } from '../../src/localnet/main';

/** The options a usage line names: `--json`, `-n`, the `--all` of `KEY|--all`. */
const optionsIn = (usage: string): string[] =>
  [...usage.matchAll(/(?<![\w-])--?([a-z][a-z0-9-]*)/g)].map((m) => m[1] ?? '').sort();

const args = (words: string, options: readonly string[]): ParsedArgs => ({
  positional: words.split(' '),
  options: new Map(options.map((o) => [o, 'x'])),
  rest: [],
});

describe('the command table', () => {
  it('names each form once', () => {
    const names = FORMS.map((f) => f.name);
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
  });

  it('resolves each command with exactly its options, and its usage lines name exactly those', () => {
    for (const spec of COMMANDS) {
      const options = [...spec.values, ...spec.flags];
      expect(resolveCommand(args(spec.name, options)).spec.name).toBe(spec.name);
      // The parser refuses any other option the CLI knows, so the table's lists are what it accepts.
      for (const other of [...ALL_OPTIONS.values, ...ALL_OPTIONS.flags].filter((o) => !options.includes(o))) {
        if (['config', 'help', 'version'].includes(other)) continue;
        expect(() => resolveCommand(args(spec.name, [other]))).toThrow(`${spec.name} does not take`);
      }
      if (ALL_OPTIONS.passThrough?.includes(spec.name) === true) continue;
      expect({ [spec.name]: [...new Set(spec.forms.flatMap((f) => optionsIn(f.usage)))].sort() }).toEqual({
        [spec.name]: [...options].sort(),
      });
    }
  });

  it("gives each form of a pass-through command the options its own parser takes, each in that form's usage", () => {
    for (const name of ALL_OPTIONS.passThrough ?? []) {
      const spec = COMMANDS.find((c) => c.name === name);
      expect(spec).toBeDefined();
      expect(spec?.values).toEqual([]);
      expect(spec?.flags).toEqual([]);
      for (const form of spec?.forms ?? []) {
        const own = ownOptionsOf(form.name ?? name);
        expect({ [form.usage]: optionsIn(form.usage) }).toEqual({ [form.usage]: [...own.values, ...own.flags].sort() });
      }
    }
    // The sub-commands' parsers read those lists: an option the table gives one is taken, another refused.
    expect(parseArgs(['--feed-id', 'ab'], ownOptionsOf('localnet price set')).options.get('feed-id')).toBe('ab');
    expect(() => parseArgs(['--zink', '1'], ownOptionsOf('localnet mint'))).toThrow('unknown option --zink');
  });

  it("parses every option the table gives `localnet` and refuses the others with the table's usage", () => {
    const samples: Record<string, string[]> = {
      listen: ['--listen', '127.0.0.1:9000'],
      fund: ['--fund', `${'1'.repeat(32)}=5`],
      'block-ms': ['--block-ms', '50'],
      'confirm-blocks': ['--confirm-blocks', '2'],
      controls: ['--controls'],
    };
    const own = ownOptionsOf('localnet');
    expect([...own.values, ...own.flags].sort()).toEqual(Object.keys(samples).sort());
    expect(() => parseLocalnetArgs(Object.values(samples).flat())).not.toThrow();
    expect(() => parseLocalnetArgs(['--key', 'demo'])).toThrow(`Usage: ${usageOf('localnet')}`);
  });

  it('prints usage lines from the table, several forms joined', () => {
    expect(usageOf('locks list', 'locks clear')).toBe(
      'sa-forge-signer locks list [--json] | locks clear KEY [--force]',
    );
    expect(usageOf('token new --biscuit')).toMatch(/^sa-forge-signer token new NAME --biscuit --keys /);
    expect(() => usageOf('token old')).toThrow('no command form "token old"');
  });
});

describe("the help's list of commands", () => {
  const list = commandList();
  const lines = list.split('\n');

  it('lists every form in the order of the table: its usage, then what it does', () => {
    const flat = list.replace(/\s+/g, ' ');
    let from = 0;
    for (const form of FORMS) {
      const at = flat.indexOf(` ${form.usage} ${form.does}`, from);
      expect({ [form.name]: at >= 0 }).toEqual({ [form.name]: true });
      from = at;
    }
  });

  it('starts usage lines at column 2 and descriptions at column 40, within 112 columns', () => {
    expect(lines.filter((l) => l.length > 112)).toEqual([]);
    // Each line starts a usage, continues one under its first argument, or continues a description at column 40.
    expect(lines.filter((l) => !/^ {2}\S|^ {40}\S|^ {3,39}[[-]/.test(l))).toEqual([]);
    for (const form of FORMS) {
      const does = form.does.split(' ')[0] ?? '';
      const row = `  ${form.usage}`.padEnd(40) + does;
      if (form.usage.length <= 36)
        expect({ [form.name]: lines.some((l) => l === row || l.startsWith(`${row} `)) }).toEqual({ [form.name]: true });
      else if (lines.includes(`  ${form.usage}`)) {
        const next = lines[lines.indexOf(`  ${form.usage}`) + 1] ?? '';
        expect({ [form.name]: next.startsWith(`${' '.repeat(40)}${does} `) }).toEqual({ [form.name]: true });
      }
    }
  });
});
