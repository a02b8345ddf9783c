// Offline check of the CloudNativePG Cluster objects in rendered manifests (multi-document YAML files) against
// OUR schema (cnpg-cluster-schema.json: written from CloudNativePG's API reference for the fields the HA overlay
// uses, every other field rejected), not against CloudNativePG's CRD, which no package here carries. Then the
// admission webhook's cross-field rules a schema cannot say: maxSyncReplicas below instances, minSyncReplicas not
// above maxSyncReplicas, and no parameter the operator sets itself.
// Usage: node validate-cnpg-cluster.mjs FILE... ; one line per Cluster and `cnpg-cluster: N passed, N failed`;
// exits 1 when one fails or none is found (a check that saw nothing must not pass).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import Ajv from 'ajv';

const schema = JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), 'cnpg-cluster-schema.json')));
const validate = new Ajv({ allErrors: true, strict: true }).compile(schema);
/** Parameters CloudNativePG manages itself (its "fixed" configuration parameters that bear on replication). */
const OPERATOR_SET = [
  'synchronous_standby_names',
  'synchronized_standby_slots',
  'primary_conninfo',
  'primary_slot_name',
];

function crossFieldErrors(spec) {
  const out = [];
  const { instances, minSyncReplicas = 0, maxSyncReplicas = 0 } = spec;
  if (maxSyncReplicas >= instances) out.push(`/spec/maxSyncReplicas ${maxSyncReplicas} must be below instances`);
  if (minSyncReplicas > maxSyncReplicas)
    out.push(`/spec/minSyncReplicas ${minSyncReplicas} cannot be above maxSyncReplicas ${maxSyncReplicas}`);
  for (const p of Object.keys(spec.postgresql?.parameters ?? {}))
    if (OPERATOR_SET.includes(p)) out.push(`/spec/postgresql/parameters/${p} is set by the operator`);
  return out;
}

let passed = 0;
let failed = 0;
for (const file of process.argv.slice(2)) {
  for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
    if (doc.errors.length) {
      console.log(`YAML     ${file}: ${doc.errors[0].message}`);
      failed++;
      continue;
    }
    const obj = doc.toJS();
    if (obj?.kind !== 'Cluster' || !String(obj.apiVersion).startsWith('postgresql.cnpg.io/')) continue;
    const id = `${file}: Cluster/${obj.metadata?.name ?? '?'} (${obj.apiVersion})`;
    const errors = validate(obj)
      ? crossFieldErrors(obj.spec)
      : validate.errors.map(
          (e) =>
            `${e.instancePath || '/'} ${e.message}${e.params?.additionalProperty ? `: ${e.params.additionalProperty}` : ''}`,
        );
    if (errors.length === 0) {
      passed++;
      console.log(`ok       ${id}`);
    } else {
      failed++;
      for (const e of errors) console.log(`INVALID  ${id}: ${e}`);
    }
  }
}
console.log(`cnpg-cluster: ${passed} passed, ${failed} failed`);
process.exit(failed || !passed ? 1 : 0);
