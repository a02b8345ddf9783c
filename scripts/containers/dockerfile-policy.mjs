// Project policy for the Dockerfile (a hadolint-like subset, offline): dockerfile-utils' validator plus our rules.
// Usage: node dockerfile-policy.mjs [Dockerfile]; prints one line per problem and `ok`/`FAIL` lines per rule.
import { readFileSync } from 'node:fs';
import { DockerfileParser } from 'dockerfile-ast';
import { validate } from 'dockerfile-utils';

const file = process.argv[2] ?? 'Dockerfile';
const text = readFileSync(file, 'utf8');
const df = DockerfileParser.parse(text);
const instructions = df.getInstructions();
const at = (ins) => `${file}:${ins.getRange().start.line + 1}`;
const rules = new Map(); // rule -> problems[]
const rule = (name, problems) => rules.set(name, problems);

rule(
  'dockerfile-utils validation (syntax, flags, instructions)',
  validate(text).map((d) => `${file}:${d.range.start.line + 1} ${d.message}`),
);

// every FROM that is not an earlier stage is pinned by digest
const stages = [];
const unpinned = [];
for (const f of df.getFROMs()) {
  const img = f.getImage() ?? '';
  if (!stages.includes(img) && !/@sha256:[a-f0-9]{64}$/.test(img))
    unpinned.push(`${at(f)} FROM ${img}: not pinned by @sha256 digest`);
  if (f.getBuildStage()) stages.push(f.getBuildStage());
}
rule('external base images pinned by digest', unpinned);

const kw = (k) => instructions.filter((i) => i.getKeyword() === k);
rule(
  'COPY --from names an earlier stage',
  kw('COPY').flatMap((ins) => {
    const v = ins.getFromFlag?.()?.getValue();
    return v && !/^\d+$/.test(v) && !stages.includes(v) ? [`${at(ins)} COPY --from=${v}: no such stage`] : [];
  }),
);
rule(
  'no ADD (COPY only)',
  kw('ADD').map((ins) => `${at(ins)} use COPY instead of ADD`),
);
rule(
  'exec-form CMD/ENTRYPOINT',
  [...kw('CMD'), ...kw('ENTRYPOINT')]
    .filter((ins) => !ins.getOpeningBracket?.())
    .map((ins) => `${at(ins)} ${ins.getKeyword()} must use the exec (JSON) form`),
);
rule(
  'RUN hygiene (no cd, apt-get -y --no-install-recommends, lists removed, npm ci)',
  kw('RUN').flatMap((ins) => {
    const body = ins.getArgumentsContent() ?? '';
    const out = [];
    if (/(^|&&|;)\s*cd\s/.test(body)) out.push(`${at(ins)} use WORKDIR instead of cd`);
    if (/apt-get install/.test(body) && !/apt-get install[^&;]*-y/.test(body))
      out.push(`${at(ins)} apt-get install without -y`);
    if (/apt-get install/.test(body) && !/--no-install-recommends/.test(body))
      out.push(`${at(ins)} apt-get install without --no-install-recommends`);
    if (/apt-get update/.test(body) && !/rm -rf \/var\/lib\/apt\/lists/.test(body))
      out.push(`${at(ins)} apt lists not removed in the same layer`);
    if (/\bnpm (install|i)\b/.test(body))
      out.push(`${at(ins)} use npm ci: the image installs exactly what the lockfile says`);
    return out;
  }),
);

// the runtime (final) stage
const last = df.getFROMs().at(-1);
const inFinal = (i) => i.getRange().start.line > last.getRange().start.line;
const finalUser =
  instructions
    .filter((i) => i.getKeyword() === 'USER' && inFinal(i))
    .at(-1)
    ?.getArgumentsContent() ?? '(none)';
rule(
  'final stage runs as uid 10001',
  /^10001(:10001)?$/.test(finalUser) ? [] : [`${file}: final stage USER is ${finalUser}, expected 10001:10001`],
);
const finalKw = (k) => instructions.filter((i) => i.getKeyword() === k && inFinal(i));
rule(
  'final stage has an exec-form HEALTHCHECK',
  finalKw('HEALTHCHECK').length === 1 && /CMD\s*\[/.test(finalKw('HEALTHCHECK')[0].getArgumentsContent() ?? '')
    ? []
    : [`${file}: the final stage needs one HEALTHCHECK CMD [..] (exec form)`],
);
const cmd = finalKw('CMD').at(-1)?.getArgumentsContent() ?? '';
rule(
  'default command is sa-forge-signer-serve',
  /^\[\s*"sa-forge-signer-serve"/.test(cmd) ? [] : [`${file}: final CMD is ${cmd || '(none)'}`],
);
const labels = finalKw('LABEL')
  .map((i) => i.getArgumentsContent() ?? '')
  .join(' ');
rule(
  'OCI labels (title, version, revision, licenses)',
  ['title', 'version', 'revision', 'licenses']
    .filter((k) => !labels.includes(`org.opencontainers.image.${k}=`))
    .map((k) => `${file}: missing LABEL org.opencontainers.image.${k}`),
);
rule(
  'final stage installs no dev tooling',
  finalKw('RUN').flatMap((ins) =>
    /\b(npm|yarn|pnpm)\s+(i|install|ci|add)\b|apt-get install/.test(ins.getArgumentsContent() ?? '')
      ? [`${at(ins)} installs packages in the runtime stage`]
      : [],
  ),
);

let failed = 0;
for (const [name, problems] of rules) {
  if (problems.length) {
    failed++;
    console.log(`FAIL ${name}`);
    for (const p of problems) console.log(`     ${p}`);
  } else console.log(`ok   ${name}`);
}
console.log(`dockerfile-policy: ${rules.size - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
