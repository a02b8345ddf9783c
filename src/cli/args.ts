/**
 * A small argv parser: positional words plus `--option value`, `--option=value` and boolean `--switch`.
 * Given an {@link OptionSpec}, it knows every option a program takes: anything else is an error that names the
 * nearest known option, so a typo never silently becomes a positional word or a value.
 */
import { SignerError } from '../util/errors';
import { didYouMean } from '../util/did-you-mean';

export interface ParsedArgs {
  positional: string[];
  options: Map<string, string | true>;
  /** Words after the first positional listed in `OptionSpec.passThrough`, unparsed (for a sub-program). */
  rest: string[];
}

export interface OptionSpec {
  /** Options that take a value. */
  values: readonly string[];
  /** Boolean switches. */
  flags: readonly string[];
  /** A positional word after which the rest of argv belongs to another parser. */
  passThrough?: readonly string[];
}

const optionName = (name: string): string => (name.length === 1 ? `-${name}` : `--${name}`);

function isOptionWord(arg: string): boolean {
  return arg.startsWith('--') || (arg.startsWith('-') && arg.length === 2 && arg !== '-');
}

/**
 * Parses argv. With an array (the older form) the listed names are switches and any other option takes a value;
 * with an OptionSpec an unknown option is refused with a "did you mean".
 */
export function parseArgs(argv: readonly string[], spec: readonly string[] | OptionSpec = []): ParsedArgs {
  const strict = !Array.isArray(spec);
  const { values, flags, passThrough } = Array.isArray(spec)
    ? { values: [] as readonly string[], flags: spec as readonly string[], passThrough: undefined }
    : (spec as OptionSpec);
  const known = [...values, ...flags];
  const positional: string[] = [];
  const options = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--') {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (!isOptionWord(arg)) {
      positional.push(arg);
      if (passThrough?.includes(arg) === true) return { positional, options, rest: argv.slice(i + 1) };
      continue;
    }
    const eq = arg.indexOf('=');
    const name = (eq > 0 ? arg.slice(0, eq) : arg).replace(/^--?/, '');
    if (strict && !known.includes(name)) {
      throw new SignerError(
        'request_invalid',
        `unknown option ${optionName(name)}${didYouMean(name, known, optionName)}; see --help`,
      );
    }
    if (eq > 0) {
      if (strict && flags.includes(name))
        throw new SignerError('request_invalid', `${optionName(name)} is a switch and takes no value`);
      options.set(name, arg.slice(eq + 1));
    } else if (flags.includes(name)) options.set(name, true);
    else {
      const value = argv[i + 1];
      if (value === undefined) throw new SignerError('request_invalid', `${arg} needs a value`);
      options.set(name, value);
      i++;
    }
  }
  return { positional, options, rest: [] };
}

export function option(args: ParsedArgs, name: string): string | undefined {
  const v = args.options.get(name);
  return v === true ? undefined : v;
}

export function flag(args: ParsedArgs, name: string): boolean {
  return args.options.get(name) === true;
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
