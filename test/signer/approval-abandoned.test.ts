/**
 * A sign waiting for an operator whose caller has gone (the MCP request was aborted: the client disconnected or
 * its request timed out). The approval is marked abandoned, nothing is sent, the sign's final audit entry says so,
 * and an operator who approves later is told the request is gone rather than "approved".
 */
import path from 'node:path';
import { approvalClosedMessage } from '../../src/signer/flow/approval';
import type { SignProgress } from '../../src/signer/types';
import { assertBuilt, BIN, run, writeYaml } from '../support/cli';
import { makeWorld, worldConfigDocument, type World } from '../support/world';

describe('an approval whose request is gone', () => {
  let w: World;
  beforeAll(async () => {
    w = await makeWorld({
      keys: { wallet: { class: 'wallet', approval: 'confirm' } },
      timings: { approval_timeout_ms: 20_000 },
    });
  });
  afterAll(() => w.close());

  const approvalId = (events: SignProgress[]) =>
    new Promise<string>((resolve) => {
      const tick = setInterval(() => {
        for (const e of events) {
          if (e.stage !== 'approval') continue;
          clearInterval(tick);
          resolve(e.approval_id);
        }
      }, 5);
    });

  it('is marked abandoned at once, audited, sends nothing, and a later approve is refused saying why', async () => {
    const events: SignProgress[] = [];
    const caller = new AbortController();
    const sends = w.localnet.stats().sends;
    const started = Date.now();
    const pending = w.engine.sign({
      payload: w.transfer('wallet', 1_000_000),
      principal: { kind: 'token', name: 'agent', keys: ['wallet'] },
      signal: caller.signal,
      onProgress: (e) => events.push(e),
    });
    const id = await approvalId(events);
    caller.abort();
    const report = await pending;
    expect(Date.now() - started).toBeLessThan(10_000); // not the 20 s approval window
    expect(report).toMatchObject({
      outcome: 'refused',
      failed_check: 'approval',
      reason: 'approval_abandoned',
      figures: { approval_id: id },
      signature: null,
    });
    expect(report.detail).toBe(
      `approval: not approved: request ${id}: the request that asked for it is gone (its caller disconnected or gave up); nothing was sent`,
    );
    expect((await w.ledger.getApproval(id))?.status).toBe('abandoned');
    const last = (await w.ledger.tail(1))[0]!;
    expect([last.command, last.outcome, last.key, last.detail]).toEqual(['sign', 'refused', 'wallet', report.detail]);
    expect(w.localnet.stats().sends).toBe(sends);

    const late = await w.ledger.decideApproval(id, 'approved', 'operator', Math.floor(Date.now() / 1000));
    expect(late.status).toBe('abandoned');
    expect(approvalClosedMessage(late, 'approved')).toBe(
      `approval ${id} cannot be approved: the request that asked for it is gone (its caller disconnected or gave up); nothing was sent`,
    );
  });

  it('the operator CLI refuses to approve it with that message and exit 1', async () => {
    assertBuilt(BIN.signer);
    const config = path.join(w.dir, 'config.yaml');
    writeYaml(config, worldConfigDocument(w));
    const events: SignProgress[] = [];
    const caller = new AbortController();
    const pending = w.engine.sign({
      payload: w.transfer('wallet', 2_000_000),
      principal: w.operator,
      signal: caller.signal,
      onProgress: (e) => events.push(e),
    });
    const id = await approvalId(events);
    caller.abort();
    await pending;
    const approve = await run(BIN.signer, ['--config', config, 'approvals', 'approve', id]);
    expect(approve.code).toBe(1);
    expect(approve.stderr.trim()).toBe(
      `approval ${id} cannot be approved: the request that asked for it is gone (its caller disconnected or gave up); nothing was sent`,
    );
    expect(approve.stderr).not.toMatch(/^approved/m);
  });
});
