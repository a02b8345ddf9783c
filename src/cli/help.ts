/**
 * `sa-forge-signer --help`: the list of commands is the command table's (./commands.ts), each form's usage line
 * with what it does beside it, so the help cannot name an option the command does not take or miss one it does.
 */
import { VERSION } from '../util/version';
import { FORMS } from './commands';

/** Where a usage line starts, and where the description beside it starts. */
const INDENT = 2;
const COLUMN = 40;
/** The widest line the list prints. */
const WIDTH = 112;

/**
 * Greedy wrapping of whole units: the first line at most `first` long, the others `rest`, unless one unit alone is
 * longer.
 */
function wrap(units: readonly string[], first: number, rest = first): string[] {
  const lines: string[] = [];
  let line = '';
  for (const unit of units) {
    if (line === '') line = unit;
    else if (line.length + 1 + unit.length <= (lines.length === 0 ? first : rest)) line += ` ${unit}`;
    else {
      lines.push(line);
      line = unit;
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}

/**
 * A usage line's parts that stay on one line: a bracketed group whole (`[--file FILE.jsonl [--head SEQ:HASH]]`),
 * and an option with its value (`--out FILE`).
 */
function usageUnits(usage: string): string[] {
  const words: string[] = [];
  let depth = 0;
  let word = '';
  for (const ch of usage) {
    if (ch === ' ' && depth === 0) {
      words.push(word);
      word = '';
      continue;
    }
    if (ch === '[') depth++;
    if (ch === ']') depth--;
    word += ch;
  }
  words.push(word);
  const units: string[] = [];
  for (const w of words) {
    const last = units.at(-1);
    if (last?.startsWith('-') === true && !last.includes(' ') && !/^[-[]/.test(w))
      units[units.length - 1] = `${last} ${w}`;
    else units.push(w);
  }
  return units;
}

/** A usage line, wrapped with its continuation lines under the first word after the command's own. */
function usageLines(usage: string): string[] {
  const command = /^[a-z]+(?: [a-z]+)*(?= |$)/.exec(usage)?.[0] ?? '';
  const hang = ' '.repeat(INDENT + command.length + 1);
  const [first = '', ...rest] = wrap(usageUnits(usage), WIDTH - INDENT, WIDTH - hang.length);
  return [`${' '.repeat(INDENT)}${first}`, ...rest.map((l) => `${hang}${l}`)];
}

/** The list of commands: each form's usage, then what it does from the column, on the same line when it fits. */
export function commandList(): string {
  const lines: string[] = [];
  for (const form of FORMS) {
    const usage = usageLines(form.usage);
    const does = wrap(form.does.split(' '), WIDTH - COLUMN);
    const [head = ''] = usage;
    if (usage.length === 1 && head.length <= COLUMN - 2) lines.push(`${head.padEnd(COLUMN)}${does.shift() ?? ''}`);
    else lines.push(...usage);
    lines.push(...does.map((d) => `${' '.repeat(COLUMN)}${d}`));
  }
  return lines.join('\n');
}

export function helpText(): string {
  return `sa-forge-signer ${VERSION}: the operator CLI of the sa-forge-signer transaction signer

usage: sa-forge-signer [--config FILE] COMMAND ...

${commandList()}

The config is --config FILE, else $SIGNER_CONFIG, else ./var/local/config.yaml (written by \`npm start\`).
check, sign and key show need the cluster's chain; with the embedded default that chain runs inside the
service, so start \`npm start\` first. Exit codes for check and sign: 0 ok/confirmed, 10 refused,
11 simulation_failed, 12 failed, 14 unknown, 1 error (docs/reports.md).
`;
}
