/**
 * `sa-forge-signer policy test` and `policy replay`, run as the operator runs them (the built CLI, a real process)
 * against a real chain and the ledger signs were written to, with a NEW.yaml that differs from the running policy.
 */
import fs from 'node:fs';
import path from 'node:path';
import { BIN, assertBuilt, run, writeYaml } from '../support/cli';
import { payload, randomAddress, transferInstruction } from '../support/payloads';
import { makeWorld, worldConfigDocument, type World } from '../support/world';

let world: World;
let current: string;
const SPENT = 10_000_000;

/** A config file beside the world's: its document with alpha's entry changed. */
function configWith(name: string, alpha: Record<string, unknown>): string {
  const doc = worldConfigDocument(world);
  const keys = doc.keys as Record<string, Record<string, unknown>>;
  keys.alpha = { ...keys.alpha, ...alpha };
  const file = path.join(world.dir, name);
  writeYaml(file, doc);
  return file;
}

beforeAll(async () => {
  assertBuilt(BIN.signer);
  world = await makeWorld({ keys: { alpha: { daily_lamport_cap: 100_000_000 } } });
  // Two signs in the ledger: 10 M lamports each (plus fees).
  for (const n of [1, 2]) {
    const r = await world.engine.sign({
      payload: world.transfer('alpha', SPENT, `spend ${String(n)}`),
      principal: world.operator,
    });
    expect(r.outcome).toBe('confirmed');
  }
  current = configWith('current.yaml', {});
}, 60_000);

afterAll(async () => {
  await world.close();
});

describe('policy replay', () => {
  test('under the running policy every recorded sign is allowed: exit 0', async () => {
    const r = await run(BIN.signer, ['--config', current, 'policy', 'replay', '--since', '1d']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/2 signs since .* judged under .*current\.yaml .*: 0 would be refused/);
  });

  test('a lower daily cap would have refused the second sign: the table says which, exit 1', async () => {
    const lower = configWith('lower-cap.yaml', { daily_lamport_cap: 15_000_000 });
    const r = await run(BIN.signer, ['--config', lower, 'policy', 'replay', '--since', '7d']);
    expect(r.code).toBe(1);
    const rows = r.stdout.split('\n').filter((l) => / alpha /.test(l));
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatch(/confirmed\s+-\s+allowed$/);
    expect(rows[1]).toMatch(
      /confirmed\s+-\s+REFUSED limits \(per_day_cap\): daily cap: \d+ lamports spent or reserved in 24 h, plus \d+ for this transaction, exceeds 15000000$/,
    );
    expect(r.stdout).toMatch(/: 1 would be refused$/m);
  });

  test('a policy without the key refuses all of its signs', async () => {
    const doc = worldConfigDocument(world);
    doc.keys = {};
    const file = path.join(world.dir, 'no-keys.yaml');
    writeYaml(file, doc);
    const r = await run(BIN.signer, ['--config', file, 'policy', 'replay', '--json']);
    expect(r.code).toBe(1);
    const rows = JSON.parse(r.stdout) as { refusal: { check: string; reason: string } | null }[];
    expect(rows.map((x) => x.refusal?.check)).toEqual(['authorized', 'authorized']);
    expect(rows.map((x) => x.refusal?.reason)).toEqual(['key_not_authorized', 'key_not_authorized']);
  });
});

describe('policy test', () => {
  let casesFile: string;
  beforeAll(() => {
    const k = world.keys.alpha!;
    const big = world.transfer('alpha', 8_000_000, 'big');
    fs.writeFileSync(path.join(world.dir, 'big.json'), JSON.stringify(big));
    casesFile = path.join(world.dir, 'cases.yaml');
    writeYaml(casesFile, {
      cases: [
        { name: 'small transfer', key: 'alpha', payload: world.transfer('alpha', 1_000_000, 'small'), expect: 'ok' },
        { name: 'big transfer', key: 'alpha', payload_file: 'big.json', expect: 'ok' },
        {
          name: 'unlisted destination',
          key: 'alpha',
          payload: payload(k.pubkey, [transferInstruction(k.pubkey, randomAddress(), 1000)], { summary: 'elsewhere' }),
          expect: 'refused',
          failed_check: 'system',
          reason: 'transfer_destination_not_allowed',
        },
      ],
    });
  });

  test('every case as expected under the running policy: a table, exit 0', async () => {
    const r = await run(BIN.signer, ['--config', current, 'policy', 'test', casesFile]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^small transfer\s+alpha\s+ok\s+ok\s+same$/m);
    expect(r.stdout).toMatch(/^big transfer\s+alpha\s+ok\s+ok\s+same$/m);
    expect(r.stdout).toMatch(
      /^unlisted destination\s+alpha\s+refused \(system: transfer_destination_not_allowed\)\s+refused \(system: transfer_destination_not_allowed\)\s+same$/m,
    );
    expect(r.stdout).toMatch(/3 cases under .*current\.yaml: 0 differ/);
  }, 60_000);

  test('under NEW.yaml with a per-transaction cap the big transfer differs: the table says which, exit 1', async () => {
    const next = configWith('new.yaml', { per_tx_lamports: 5_000_000 });
    const r = await run(BIN.signer, ['--config', next, 'policy', 'test', casesFile]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^small transfer\s+alpha\s+ok\s+ok\s+same$/m);
    expect(r.stdout).toMatch(/^big transfer\s+alpha\s+ok\s+refused \(limits\)\s+DIFFERS: limits: per-transaction cap/m);
    expect(r.stdout).toMatch(/3 cases under .*new\.yaml: 1 differ/);
  }, 60_000);

  test('a case pins the reason: the same check with another reason differs', async () => {
    const k = world.keys.alpha!;
    const pinned = path.join(world.dir, 'pinned.yaml');
    writeYaml(pinned, {
      cases: [
        {
          name: 'unlisted destination',
          key: 'alpha',
          payload: payload(k.pubkey, [transferInstruction(k.pubkey, randomAddress(), 1000)], { summary: 'elsewhere' }),
          expect: 'refused',
          failed_check: 'system',
          reason: 'system_instruction_not_allowed',
        },
      ],
    });
    const r = await run(BIN.signer, ['--config', current, 'policy', 'test', pinned, '--json']);
    expect(r.code).toBe(1);
    const [row] = JSON.parse(r.stdout) as { got: unknown; same: boolean }[];
    expect(row).toMatchObject({
      got: { outcome: 'refused', failed_check: 'system', reason: 'transfer_destination_not_allowed' },
      same: false,
    });
    const unknown = path.join(world.dir, 'unknown-reason.yaml');
    writeYaml(unknown, { cases: [{ name: 'x', payload: {}, expect: 'refused', reason: 'no_such_reason' }] });
    const bad = await run(BIN.signer, ['--config', current, 'policy', 'test', unknown]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('cases[0].reason: one of the reasons docs/reports.md lists');
  }, 60_000);

  test('a cases file without cases is refused with what it needs', async () => {
    const empty = path.join(world.dir, 'empty.yaml');
    writeYaml(empty, { cases: [] });
    const r = await run(BIN.signer, ['--config', current, 'policy', 'test', empty]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('needs a non-empty list under cases:');
  });
});
