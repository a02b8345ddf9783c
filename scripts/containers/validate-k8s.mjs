// Offline validation of rendered Kubernetes manifests (multi-document YAML files, or stdin).
// 1) kubernetes-models: ajv validators compiled from the Kubernetes OpenAPI spec (types, required fields, formats);
//    they accept unknown fields, so
// 2) a strict pass: each object becomes a typed literal checked by TypeScript against kubernetes-types, whose
//    excess-property check reports unknown or misspelt fields (e.g. readOnlyRootFileSystem).
// Usage: node validate-k8s.mjs [--except APIVERSION/KIND]... FILE... ; prints one line per object and
// `k8s-schema: N passed, N failed, N skipped`. --except leaves out a custom resource whose schema is not at hand
// (it has none in kubernetes-models): each one is listed as skipped, never counted as passed.
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import ts from 'typescript';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const args = process.argv.slice(2);
const except = new Set();
const files = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--except') except.add(args[++i]);
  else files.push(args[i]);
}
let skipped = 0;
const sources = files.length
  ? files.map((f) => ({ name: f, text: readFileSync(f, 'utf8') }))
  : [{ name: 'stdin', text: readFileSync(0, 'utf8') }];
let failed = 0,
  passed = 0;
const objects = [];
for (const { name, text } of sources) {
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length) {
      console.log(`YAML     ${name}: ${doc.errors[0].message}`);
      failed++;
      continue;
    }
    const obj = doc.toJS();
    if (obj && except.has(`${obj.apiVersion}/${obj.kind}`)) {
      skipped++;
      console.log(`skipped  ${name}: ${obj.kind}/${obj.metadata?.name ?? '?'} (${obj.apiVersion}): not validated here`);
    } else if (obj) objects.push({ file: name, obj });
  }
}
const tsLines = [];
const checked = [];
for (const { file, obj } of objects) {
  const { apiVersion = '', kind = '' } = obj;
  const id = `${file}: ${kind}/${obj.metadata?.name ?? '?'} (${apiVersion})`;
  let ok = true;
  try {
    const mod = await import(`kubernetes-models/${apiVersion}/${kind}`);
    new mod[kind](obj).validate();
  } catch (e) {
    ok = false;
    if (e.errors) for (const er of e.errors) console.log(`INVALID  ${id}: ${er.instancePath} ${er.message}`);
    else console.log(`UNKNOWN  ${id}: no schema for this apiVersion/kind (${e.code ?? e.message})`);
  }
  const [grp, ver] = apiVersion.includes('/') ? apiVersion.split('/') : ['core', apiVersion];
  const startLine = tsLines.join('\n').split('\n').length - (tsLines.length ? 0 : 1);
  const n = checked.length;
  tsLines.push(
    `import type { ${kind} as T${n} } from "kubernetes-types/${grp.split('.')[0]}/${ver}";\n` +
      `export const o${n}: T${n} = ${JSON.stringify(obj, null, 1)};`,
  );
  checked.push({ id, ok, startLine });
}
// the generated file must sit where node_modules/kubernetes-types resolves
const gen = join(repo, '.tmp', 'containers', 'k8s-gen', 'manifests.ts');
mkdirSync(dirname(gen), { recursive: true });
writeFileSync(gen, tsLines.join('\n'));
const program = ts.createProgram([gen], {
  noEmit: true,
  strict: true,
  types: [],
  skipLibCheck: true,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
});
const bad = new Set();
for (const d of ts.getPreEmitDiagnostics(program).filter((x) => x.file?.fileName === gen)) {
  const line = d.file.getLineAndCharacterOfPosition(d.start).line;
  let idx = 0;
  checked.forEach((c, i) => {
    if (c.startLine <= line) idx = i;
  });
  bad.add(idx);
  console.log(
    `STRICT   ${checked[idx].id}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ').split('. ')[0].slice(0, 240)}`,
  );
}
checked.forEach((c, i) => {
  if (c.ok && !bad.has(i)) {
    passed++;
    console.log(`ok       ${c.id}`);
  } else failed++;
});
console.log(`k8s-schema: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed || !passed ? 1 : 0);
