/**
 * Approvals by quorum from the operator CLI, as operators on the host run it: the built binary signs with a 2-of-3
 * key and waits, two operators vote with `approvals approve ID --as NAME`, and the transfer confirms on the embedded
 * chain. `--as` must name a configured operator who is one of the key's approvers; without operators configured the
 * host's single operator decides as before, and `--as` is refused.
 */
import fs from 'node:fs';
import path from 'node:path';
import { until } from '../support/async';
import { assertBuilt, BIN, run, writeYaml } from '../support/cli';
import { balanceOf, makeWorld, worldConfigDocument, type World } from '../support/world';

describe('sa-forge-signer approvals --as (a 2-of-3 key)', () => {
  let w: World;
  let config: string;
  const cli = (...args: string[]) => run(BIN.signer, ['--config', config, ...args]);

  beforeAll(async () => {
    assertBuilt(BIN.signer);
    w = await makeWorld({
      keys: {
        vault: {
          class: 'wallet',
          approval: 'confirm',
          approvals: { required: 2, approvers: ['alice', 'bob', 'carol'] },
        },
      },
      timings: { approval_timeout_ms: 60_000 },
    });
    config = path.join(w.dir, 'config.yaml');
    writeYaml(
      config,
      worldConfigDocument(w, {
        operators: [
          { name: 'alice', role: 'admin' },
          { name: 'bob', role: 'approver' },
          { name: 'carol', role: 'approver' },
          { name: 'dave', role: 'approver' },
        ],
      }),
    );
  });
  afterAll(() => w.close());

  it('two approvers vote with --as and the waiting sign confirms; a missing, unknown or non-approver name is refused', async () => {
    const payload = path.join(w.dir, 'vault.json');
    fs.writeFileSync(payload, JSON.stringify(w.transfer('vault', 1_500_000)));
    const signing = cli('sign', payload);
    let id = '';
    await until(async () => {
      const [pending] = await w.ledger.listApprovals({ status: 'pending' });
      id = pending?.id ?? '';
      return id !== '';
    }, 'the pending approval');

    const nameless = await cli('approvals', 'approve', id);
    expect(nameless.code).toBe(1);
    expect(nameless.stderr.trim()).toBe(
      'error: operators are configured: say which one you are with --as NAME (one of alice, bob, carol, dave)',
    );
    const unknown = await cli('approvals', 'approve', id, '--as', 'mallory');
    expect(unknown.stderr.trim()).toBe(
      'error: --as "mallory": no such operator under operators (configured: alice, bob, carol, dave)',
    );
    const outsider = await cli('approvals', 'approve', id, '--as', 'dave');
    expect(outsider.code).toBe(1);
    expect(outsider.stderr.trim()).toBe(
      `error: "dave" is not an approver of approval ${id} (key vault); its approvers: alice, bob, carol`,
    );

    const first = await cli('approvals', 'approve', id, '--as', 'alice');
    expect(first.code).toBe(0);
    expect(first.stderr.trim()).toBe(`voted to approve ${id} (key vault): 1 of 2: alice; it needs 2 approvals`);
    const list = await cli('approvals', 'list');
    expect(list.stdout).toContain(`${id}  key vault`);
    expect(list.stdout).toContain('    approvals: 1 of 2: alice  (approvers: alice, bob, carol)');
    const listed = JSON.parse((await cli('approvals', 'list', '--json')).stdout) as Record<string, unknown>[];
    expect(listed).toEqual([
      expect.objectContaining({
        id,
        required: 2,
        approvers: ['alice', 'bob', 'carol'],
        votes: [expect.objectContaining({ operator: 'alice', decision: 'approved', credential: null })],
      }),
    ]);

    const second = await cli('approvals', 'approve', id, '--as', 'bob');
    expect(second.code).toBe(0);
    expect(second.stderr.trim()).toBe(`approved ${id} (key vault): 2 of 2: alice, bob`);

    const signed = await signing;
    expect(signed.code).toBe(0);
    expect((JSON.parse(signed.stdout) as { outcome: string }).outcome).toBe('confirmed');
    expect(signed.stderr).toContain(
      `waiting for 2 operators' approvals: sa-forge-signer approvals approve ${id} --as NAME (or reject)`,
    );
    expect(await balanceOf(w, w.keys.vault!.destination)).toBe(1_500_000);
    const late = await cli('approvals', 'reject', id, '--as', 'carol');
    expect(late.code).toBe(1);
    expect(late.stderr.trim()).toBe(`approval ${id} is approved; it can no longer be rejected`);
  }, 120_000);

  it("after `operator revoke bob`, bob's earlier approval no longer counts and his new vote is refused", async () => {
    const now = Math.floor(Date.now() / 1000);
    const asked = await w.ledger.createApproval({
      key: 'vault',
      summary: 'refit',
      payload_hash: 'ef'.repeat(32),
      balance_change: -1_000_000,
      fee: 5_000,
      compute_units: 150,
      requested_by: 'token:agent',
      ts: now,
      expires_at: now + 300,
      required: 2,
      approvers: ['alice', 'bob', 'carol'],
    });
    expect((await cli('approvals', 'approve', asked.id, '--as', 'bob')).code).toBe(0);
    const revoked = await cli('operator', 'revoke', 'bob');
    expect(revoked.code).toBe(0);
    expect(revoked.stderr).toMatch(/^revoked bob: .*none of their votes counts any more/);
    const again = await cli('approvals', 'approve', asked.id, '--as', 'bob');
    expect(again.code).toBe(1);
    expect(again.stderr.trim()).toBe(
      'error: operator "bob" is revoked (sa-forge-signer operator revoke); a new passkey enrollment reinstates them: their vote would not count',
    );
    const carol = await cli('approvals', 'approve', asked.id, '--as', 'carol');
    expect(carol.code).toBe(0);
    expect(carol.stderr.trim()).toBe(`voted to approve ${asked.id} (key vault): 1 of 2: carol; it needs 2 approvals`);
    expect(await w.ledger.getApproval(asked.id)).toMatchObject({ status: 'pending', decided_by: null });
  });

  it('without operators configured, --as is refused: the host operator decides alone (cli.test.ts)', async () => {
    const plain = path.join(w.dir, 'plain.yaml');
    const doc = worldConfigDocument(w) as { keys: Record<string, Record<string, unknown>> };
    delete doc.keys.vault!.approvals;
    writeYaml(plain, doc);
    const refused = await run(BIN.signer, ['--config', plain, 'approvals', 'approve', 'abcdefgh', '--as', 'alice']);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toBe(
      'error: --as names one of the configured operators, and the config has none (operators:); run approvals approve ID without it',
    );
  });
});
