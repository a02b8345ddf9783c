/**
 * The source's import graph has no cycles, type-only imports included, and `util/` and `config/` import nothing
 * from the layers that use them (`config/` may read the leaf constants of `keys/` and `chain/`): a module is read,
 * and changed, knowing only what it imports.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const SRC = path.join(__dirname, '..', 'src');

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = path.join(dir, d.name);
    if (d.isDirectory()) return sources(p);
    return d.name.endsWith('.ts') && !d.name.endsWith('.d.ts') ? [p] : [];
  });
}

/** Each source file's relative imports (and re-exports), resolved to files. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sources(SRC)) {
    const { importedFiles } = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
    const targets = importedFiles
      .map((i) => i.fileName)
      .filter((spec) => spec.startsWith('.'))
      .map((spec) => {
        const base = path.resolve(path.dirname(file), spec);
        return [`${base}.ts`, path.join(base, 'index.ts')].find((f) => fs.existsSync(f)) ?? `${base}.ts`;
      });
    graph.set(file, targets);
  }
  return graph;
}

function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (f: string): void => {
    state.set(f, 'open');
    stack.push(f);
    for (const t of graph.get(f) ?? []) {
      if (state.get(t) === 'open') found.push(stack.slice(stack.indexOf(t)).concat(t));
      else if (!state.has(t)) visit(t);
    }
    stack.pop();
    state.set(f, 'done');
  };
  for (const f of graph.keys()) if (!state.has(f)) visit(f);
  return found.map((c) => c.map((f) => path.relative(SRC, f)));
}

describe('the import graph of src/', () => {
  const graph = importGraph();

  it('has no cycles', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('keeps util/ and config/ below the layers that use them', () => {
    const ABOVE_CONFIG = ['signer', 'ledger', 'mcp', 'http', 'cli', 'relay', 'client', 'localnet'];
    const upward = [...graph].flatMap(([from, targets]) => {
      const layer = path.relative(SRC, from).split(path.sep)[0];
      const forbidden = (to: string) => (layer === 'util' ? to !== 'util' : ABOVE_CONFIG.includes(to));
      if (layer !== 'util' && layer !== 'config') return [];
      return targets
        .map((t) => path.relative(SRC, t))
        .filter((t) => forbidden(t.split(path.sep)[0]!))
        .map((t) => `${path.relative(SRC, from)} -> ${t}`);
    });
    expect(upward).toEqual([]);
  });
});
