/**
 * The SOL per-destination daily cap on the real engine (LiteSVM behind its JSON-RPC endpoint): what one account
 * received from the key in 24 h, counted from the intents' lamport credits in the ledger, plus this payment may
 * reach `per_destination_per_day_lamports` but not pass it; `check` previews what `sign` then does.
 */
import { makeWorld, type World } from '../support/world';

const CAP = 1_500_000;
let w: World;

beforeAll(async () => {
  w = await makeWorld({ keys: { capped: { per_destination_per_day_lamports: CAP }, free: {} } });
});
afterAll(() => w.close());

const sign = (key: string, lamports: number) =>
  w.engine.sign({ payload: w.transfer(key, lamports), principal: w.operator });

it('pays one destination up to the cap exactly, refuses one lamport more, and records the credits in the intent', async () => {
  const destination = w.keys.capped!.destination;
  expect(await sign('capped', 1_000_000)).toMatchObject({ outcome: 'confirmed' });
  expect(await sign('capped', 500_000)).toMatchObject({ outcome: 'confirmed' });

  const checked = await w.engine.check({ payload: w.transfer('capped', 1), principal: w.operator });
  const refusal = {
    outcome: 'refused',
    failed_check: 'limits',
    reason: 'per_destination_cap',
    figures: { destination, received: CAP, requested: 1, cap: CAP },
  };
  expect(checked).toMatchObject(refusal);
  expect(await sign('capped', 1)).toMatchObject(refusal);

  const intents = (await w.ledger.signEntriesForKey('capped', 0)).filter((e) => e.command === 'sign-intent');
  expect(intents.map((e) => e.lamport_credits)).toEqual([
    [{ address: destination, lamports: 1_000_000 }],
    [{ address: destination, lamports: 500_000 }],
  ]);
  expect(await w.ledger.verify()).toMatchObject({ ok: true });
});

it('a key without the cap pays the same destination as often as its daily cap allows', async () => {
  for (const lamports of [1_000_000, 1_000_000])
    expect(await sign('free', lamports)).toMatchObject({ outcome: 'confirmed' });
});
