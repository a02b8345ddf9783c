/**
 * The HA overlay's CloudNativePG Cluster against our own schema of the fields it uses
 * (scripts/containers/cnpg-cluster-schema.json, written from CloudNativePG's API reference; no package carries the
 * CRD's schema). The shipped Cluster passes; an unknown or misspelt field, a wrong type, a value out of range and a
 * broken cross-field rule each fail, so the check can fail.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'yaml';

const repo = path.resolve(__dirname, '../..');
const script = path.join(repo, 'scripts/containers/validate-cnpg-cluster.mjs');
const shipped = path.join(repo, 'deploy/overlays/postgres-ha/cluster.yaml');
let tmp: string;

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cnpg-schema-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Runs the validator on `file`: its exit status and output. */
function check(file: string): { status: number; out: string } {
  try {
    return { status: 0, out: execFileSync(process.execPath, [script, file], { encoding: 'utf8' }) };
  } catch (e) {
    const err = e as { status: number; stdout: string };
    return { status: err.status, out: err.stdout };
  }
}

type Cluster = { spec: Record<string, unknown> & { affinity: Record<string, unknown>; instances: number } };

/** The shipped Cluster changed by `edit`, written to a file of its own. */
function variant(name: string, edit: (c: Cluster) => void): string {
  const c = parse(fs.readFileSync(shipped, 'utf8')) as Cluster;
  edit(c);
  const file = path.join(tmp, `${name}.yaml`);
  fs.writeFileSync(file, stringify(c));
  return file;
}

it('passes the shipped Cluster', () => {
  const { status, out } = check(shipped);
  expect(out).toMatch(/cnpg-cluster: 1 passed, 0 failed/);
  expect(status).toBe(0);
});

it.each([
  [
    'a misspelt spec field',
    (c: Cluster) => {
      c.spec.minSyncReplica = 1;
    },
    'must NOT have additional properties: minSyncReplica',
  ],
  [
    'an unknown nested field',
    (c: Cluster) => {
      c.spec.affinity.enablePodAntiAfinity = true;
    },
    '/spec/affinity must NOT have additional properties: enablePodAntiAfinity',
  ],
  [
    'instances as a string',
    (c: Cluster) => {
      c.spec.instances = '3' as unknown as number;
    },
    '/spec/instances must be integer',
  ],
  [
    'a parameter value that is not a string',
    (c: Cluster) => {
      c.spec.postgresql = { parameters: { synchronous_commit: true } };
    },
    '/spec/postgresql/parameters/synchronous_commit must be string',
  ],
  [
    'no instance',
    (c: Cluster) => {
      c.spec.instances = 0;
    },
    '/spec/instances must be >= 1',
  ],
  [
    'as many synchronous standbys as instances',
    (c: Cluster) => {
      c.spec.maxSyncReplicas = c.spec.instances;
    },
    '/spec/maxSyncReplicas 3 must be below instances',
  ],
  [
    'a parameter the operator sets',
    (c: Cluster) => {
      c.spec.postgresql = { parameters: { synchronous_standby_names: 'ANY 1 (*)' } };
    },
    'synchronous_standby_names is set by the operator',
  ],
])('fails %s', (name, edit, message) => {
  const { status, out } = check(variant(name.replace(/\W+/g, '-'), edit));
  expect(status).toBe(1);
  expect(out).toContain(message);
  expect(out).toMatch(/cnpg-cluster: 0 passed, 1 failed/);
});

it('fails a file with no Cluster in it (a check that saw nothing does not pass)', () => {
  const { status, out } = check(path.join(repo, 'deploy/overlays/postgres-ha/deployment-patch.yaml'));
  expect(out).toMatch(/cnpg-cluster: 0 passed, 0 failed/);
  expect(status).toBe(1);
});
