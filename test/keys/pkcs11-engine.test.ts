/**
 * A pkcs11 key whose token goes away while the engine runs, on a real SoftHSM2 token. "Token removed" is its
 * directory moved out of SoftHSM2's token directory (test/support/softhsm.ts): the module then fails every call
 * on the key, as it would for an unplugged device. The next sign refuses with a clear error, nothing is sent or
 * recorded, readiness names the store's problem, and once the directory is back the same key signs again.
 */
import type { AuditEntry } from '../../src/ledger/types';
import { firstAnswer } from '../support/async';
import { balanceOf, makeWorld, type World } from '../support/world';

let w: World;
beforeAll(async () => {
  w = await makeWorld({ store: 'pkcs11' });
});
afterAll(() => w.close());

async function entries(): Promise<AuditEntry[]> {
  const out: AuditEntry[] = [];
  for await (const e of w.ledger.entries()) out.push(e);
  return out;
}

it('token removed: the sign refuses, nothing is sent, /ready says why; it signs again once the token is back', async () => {
  const { destination } = w.keys.alpha!;
  const first = await w.engine.sign({ payload: w.transfer('alpha', 1_000_000), principal: w.operator });
  expect(first.outcome).toBe('confirmed');
  const recorded = (await entries()).length;

  w.token!.remove();
  try {
    await expect(
      w.engine.sign({ payload: w.transfer('alpha', 5_000_000, 'while the token is gone'), principal: w.operator }),
    ).rejects.toMatchObject({
      code: 'key_store',
      message: expect.stringMatching(
        /PKCS#11 token "t-\w+" failed \(C_Sign\w*: CKR_\w+\); nothing was signed/,
      ) as unknown,
    });
    expect((await entries()).length).toBe(recorded);
    expect(await balanceOf(w, destination)).toBe(1_000_000);
    const ready = await w.engine.ready();
    expect(ready.ok).toBe(false);
    expect(ready.detail.keys).toMatch(/^alpha: .*PKCS#11 token "t-\w+" (failed|is not present)/);
  } finally {
    w.token!.restore();
  }

  // Readiness probes reconnect (reconnect_ms is 50 in the world) and report ok once the token answers again.
  await firstAnswer(
    () => w.engine.ready(),
    (r) => r.ok,
  );
  const again = await w.engine.sign({ payload: w.transfer('alpha', 2_000_000), principal: w.operator });
  expect(again.outcome).toBe('confirmed');
  expect(await balanceOf(w, destination)).toBe(3_000_000);
});
