/**
 * The configuration reference, derived from the convict schema of each section: every setting with its default,
 * its environment variable and its doc. docs/configuration.md is this text (`npm run docs:config` writes it), and a
 * test fails when the two differ, so the reference can never state a default the schema does not have.
 */
import {
  clusterSchema,
  fundEntrySchema,
  issuedCredentialSchema,
  keySchema,
  notifyHookSchema,
  operatorSchema,
  priceFeedEntrySchema,
  programEntrySchema,
  tokenPolicySchema,
  tokenSchema,
  topLevelSchema,
} from './schema';
import { isLeaf, type Group } from './setting';

/** One setting: its dotted path (`<name>` and `[]` stand for a collection's entries) and what the schema says. */
export interface Setting {
  path: string;
  doc: string;
  default: unknown;
  env: string | null;
}

function walk(schema: Group, prefix: string, out: Setting[]): Setting[] {
  for (const [name, node] of Object.entries(schema)) {
    const path = prefix === '' ? name : `${prefix}.${name}`;
    if (isLeaf(node)) out.push({ path, doc: node.doc, default: node.default ?? null, env: node.env ?? null });
    else walk(node, path, out);
  }
  return out;
}

/** The schemas in the order the reference lists them: the file's top level, then each collection's entries. */
const SECTIONS: readonly { title: string; prefix: string; schema: Group }[] = [
  { title: 'Top level', prefix: '', schema: topLevelSchema },
  { title: 'An operator (`operators[]`)', prefix: 'operators[]', schema: operatorSchema },
  { title: 'A key (`keys.<name>`)', prefix: 'keys.<name>', schema: keySchema },
  {
    title: "A key's mint (`keys.<name>.tokens[]`)",
    prefix: 'keys.<name>.tokens[]',
    schema: tokenPolicySchema,
  },
  {
    title: 'A price (`prices.feeds[]`)',
    prefix: 'prices.feeds[]',
    schema: priceFeedEntrySchema,
  },
  {
    title: 'A bearer token (`serve.tokens[]`)',
    prefix: 'serve.tokens[]',
    schema: tokenSchema,
  },
  {
    title: 'An issued credential (`serve.credentials.issued[]`)',
    prefix: 'serve.credentials.issued[]',
    schema: issuedCredentialSchema,
  },
  {
    title: 'A webhook (`notify[]`)',
    prefix: 'notify[]',
    schema: notifyHookSchema,
  },
  {
    title: 'A cluster (`clusters.<name>`)',
    prefix: 'clusters.<name>',
    schema: clusterSchema,
  },
  {
    title: "A cluster's program (`clusters.<name>.programs[]`)",
    prefix: 'clusters.<name>.programs[]',
    schema: programEntrySchema,
  },
  {
    title: 'An account the embedded chain funds (`localnet.fund[]`)',
    prefix: 'localnet.fund[]',
    schema: fundEntrySchema,
  },
];

/** Every setting of every section, in reference order. */
export function allSettings(): { title: string; settings: Setting[] }[] {
  return SECTIONS.map((s) => ({ title: s.title, settings: walk(s.schema, s.prefix, []) }));
}

/** A default as the reference shows it: the YAML a person would write, `—` where the setting has none. */
export function shownDefault(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return value === '' ? "''" : value;
  return JSON.stringify(value);
}

const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

export function configReference(): string {
  const lines = [
    '# Configuration reference',
    '',
    '<!-- Generated from the schemas in src/config/sections/ by `npm run docs:config`; test/config/reference.unit.test.ts',
    '     fails when it differs. Edit the schema, not this file. -->',
    '',
    'Every setting the signer reads, with its default and the environment variable that overrides it (env beats the',
    'file). `config/example.yaml` shows the same settings in a file. `<name>` stands for an entry of a map, `[]` for an',
    'entry of a list; entries have no environment variables.',
  ];
  for (const { title, settings } of allSettings()) {
    lines.push('', `## ${title}`, '', '| setting | default | env | what |', '| --- | --- | --- | --- |');
    for (const s of settings) {
      const env = s.env === null ? '' : `\`${s.env}\``;
      lines.push(`| \`${s.path}\` | \`${cell(shownDefault(s.default))}\` | ${env} | ${cell(s.doc)} |`);
    }
  }
  return `${lines.join('\n')}\n`;
}
