/** A small argv parser: positional words plus `--flag value`, `--flag=value` and boolean `--switch`. */
import { SignerError } from '../util/errors';

export interface ParsedArgs {
  positional: string[];
  options: Map<string, string | true>;
}

export function parseArgs(argv: readonly string[], booleans: readonly string[] = []): ParsedArgs {
  const positional: string[] = [];
  const options = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (arg.startsWith('--') || (arg.startsWith('-') && arg.length === 2 && arg !== '-')) {
      const eq = arg.indexOf('=');
      const name = (eq > 0 ? arg.slice(0, eq) : arg).replace(/^--?/, '');
      if (eq > 0) options.set(name, arg.slice(eq + 1));
      else if (booleans.includes(name)) options.set(name, true);
      else {
        const value = argv[i + 1];
        if (value === undefined) throw new SignerError('request_invalid', `${arg} needs a value`);
        options.set(name, value);
        i++;
      }
    } else positional.push(arg);
  }
  return { positional, options };
}

export function option(args: ParsedArgs, name: string): string | undefined {
  const v = args.options.get(name);
  return v === true ? undefined : v;
}

export function requireOption(args: ParsedArgs, name: string, usage: string): string {
  const v = option(args, name);
  if (v === undefined) throw new SignerError('request_invalid', `--${name} is required: ${usage}`);
  return v;
}

export function requirePositional(args: ParsedArgs, index: number, what: string, usage: string): string {
  const v = args.positional[index];
  if (v === undefined) throw new SignerError('request_invalid', `missing ${what}: ${usage}`);
  return v;
}
