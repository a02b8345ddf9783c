/**
 * The reasons defined in src/signer/refusals.ts are the reasons the engine gives: every one is named by a refusal
 * somewhere in src/signer or src/pricing (the price checks), and the code names no reason the table lacks (the
 * compiler checks that too).
 */
import fs from 'node:fs';
import path from 'node:path';
import { REASON_NAMES } from '../../src/signer/refusals';

const ENGINE = ['../../src/signer', '../../src/pricing'].map((dir) => path.join(__dirname, dir));

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return e.name.endsWith('.ts') && e.name !== 'refusals.ts' ? [p] : [];
  });
}

test('every defined reason is given by the engine, and only those', () => {
  const given = new Set<string>();
  for (const file of ENGINE.flatMap(sources)) {
    const text = fs.readFileSync(file, 'utf8');
    for (const m of text.matchAll(/\b(?:refusal|refusalOf|refused)\(\s*'([a-z_]+)'/g)) given.add(m[1]!);
    for (const m of text.matchAll(/report\.reason = '([a-z_]+)'/g)) given.add(m[1]!);
  }
  expect([...given].sort()).toEqual([...REASON_NAMES].sort());
});
