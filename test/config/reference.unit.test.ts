/**
 * Docs that cannot drift: the configuration reference is the schema's own text, config/example.yaml shows each
 * setting's real default, and a doc that names a setting with a value in parentheses states its real default.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { allSettings, configReference, type Setting } from '../../src/config/reference';

const ROOT = path.join(__dirname, '../..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const settings: Setting[] = allSettings().flatMap((s) => s.settings);

describe('the configuration reference', () => {
  test('docs/configuration.md is generated from the schema (npm run docs:config)', () => {
    expect(read('docs/configuration.md')).toBe(configReference());
  });

  test('every top-level setting with an environment variable names a SIGNER_ variable, each once', () => {
    const envs = settings.flatMap((s) => (s.env === null ? [] : [s.env]));
    expect(envs.length).toBeGreaterThan(20);
    for (const env of envs) expect(env).toMatch(/^SIGNER_[A-Z0-9_]+$/);
    expect(new Set(envs).size).toBe(envs.length);
  });
});

/** The setting a YAML path stands for: map entries of keys and clusters, list entries of the collections. */
function settingFor(parts: readonly (string | number)[]): Setting | undefined {
  const generic = parts.map((p, i) => {
    if (typeof p === 'number') return '[]';
    if (i === 1 && (parts[0] === 'keys' || parts[0] === 'clusters')) return '<name>';
    return p;
  });
  const dotted = generic.join('.').replace(/\.\[\]/g, '[]');
  return settings.find((s) => s.path === dotted);
}

/** Every scalar or list of scalars in a parsed YAML document, with its path; lists of entries are walked. */
function* leaves(value: unknown, at: (string | number)[] = []): Generator<[(string | number)[], unknown]> {
  if (Array.isArray(value)) {
    const entries = value.some((v) => v !== null && typeof v === 'object');
    if (!entries) yield [at, value];
    else for (const [i, v] of value.entries()) yield* leaves(v, [...at, i]);
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) yield* leaves(v, [...at, k]);
  } else yield [at, value];
}

describe('config/example.yaml', () => {
  test('shows the default of every setting that has one', () => {
    const example: unknown = parse(read('config/example.yaml'));
    const checked: string[] = [];
    const wrong: string[] = [];
    for (const [at, value] of leaves(example)) {
      const setting = settingFor(at);
      // A setting without a default (a key's pubkey, a token's sha256) is shown with an example value.
      if (!setting || setting.default === null) continue;
      checked.push(setting.path);
      if (JSON.stringify(value) !== JSON.stringify(setting.default)) {
        wrong.push(`${at.join('.')}: ${JSON.stringify(value)}, but the default is ${JSON.stringify(setting.default)}`);
      }
    }
    expect(checked.length).toBeGreaterThan(30);
    expect(wrong).toEqual([]);
  });
});

/** "12 s", "64 KiB", "50000" → the number in the setting's own unit (ms or bytes), by the setting's name. */
function inSettingUnit(settingPath: string, amount: string, unit: string | undefined): number {
  const n = Number(amount.replace(/[,_]/g, ''));
  const scale: Record<string, number> = { ms: 1, s: 1000, min: 60_000, bytes: 1, KiB: 1024, MiB: 1024 * 1024 };
  if (unit === undefined) return n;
  if (settingPath.endsWith('_ms') && ['ms', 's', 'min'].includes(unit)) return n * (scale[unit] ?? NaN);
  if (settingPath.endsWith('_bytes') && ['bytes', 'KiB', 'MiB'].includes(unit)) return n * (scale[unit] ?? NaN);
  return NaN;
}

describe('the docs', () => {
  const files = ['README.md', ...fs.readdirSync(path.join(ROOT, 'docs')).map((f) => `docs/${f}`)].filter(
    (f) => f.endsWith('.md') && f !== 'docs/configuration.md',
  );
  const numeric = settings.filter(
    (s) => typeof s.default === 'number' && !s.path.includes('<') && !s.path.includes('['),
  );

  test('a setting named with a number in parentheses right after it states its default', () => {
    const stated: string[] = [];
    const wrong: string[] = [];
    for (const file of files) {
      const text = read(file);
      for (const s of numeric) {
        const names = [s.path, ...(s.env === null ? [] : [s.env])].map((n) => n.replace(/[.[\]]/g, '\\$&'));
        const pattern = new RegExp(
          `\`(?:${names.join('|')})\`\\s*\\(([0-9][0-9,_.]*)\\s*(ms|s|min|bytes|KiB|MiB)?[,)]`,
          'g',
        );
        for (const m of text.matchAll(pattern)) {
          stated.push(`${file}: ${m[0]}`);
          const value = inSettingUnit(s.path, m[1] ?? '', m[2]);
          if (value !== s.default) wrong.push(`${file}: ${m[0]} — the default is ${String(s.default)}`);
        }
      }
    }
    expect(stated.length).toBeGreaterThan(0);
    expect(wrong).toEqual([]);
  });
});
