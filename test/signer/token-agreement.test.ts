/**
 * `check` tells what `sign` does, as a property: random token policies (caps, destinations, per-destination caps,
 * approval thresholds) on keys of the real engine, and random payments against them. For every payment, `check`'s
 * outcome and failed check are what `sign` then does (approval answered automatically): `ok` exactly when `sign`
 * confirms, `refused` with the same check otherwise; and `sign` asks an operator exactly when `check` said it would.
 */
import fc from 'fast-check';
import type { KeyConfig, TokenPolicy } from '../../src/config/types';
import { payload, randomAddress } from '../support/payloads';
import { setMint, setTokenAccount, transferChecked } from '../support/tokens';
import { makeWorld, type World } from '../support/world';

const MINT = randomAddress();
const merchant = randomAddress();
const stranger = randomAddress();
const M = 1_000_000n;
const KEYS = 6;

const amount = fc.bigInt({ min: 1n, max: 6n * M });
const policyArb = fc.record({
  per_tx: fc.option(fc.bigInt({ min: 1n, max: 5n * M }), { nil: null }),
  per_day: fc.bigInt({ min: 1n, max: 12n * M }),
  destinations: fc.constantFrom<string[] | null>(null, [merchant]),
  per_destination_per_day: fc.option(fc.bigInt({ min: 1n, max: 8n * M }), { nil: null }),
  approve_above: fc.option(amount, { nil: null }),
  confirm: fc.boolean(),
});

let w: World;
const sources: Record<string, string> = {};
const receivers: Record<string, string> = {};

beforeAll(async () => {
  // Policies drawn once, from a fixed seed, so a failure names a reproducible world.
  const drawn = fc.sample(policyArb, { seed: 2026, numRuns: KEYS });
  const keys: Record<string, Partial<KeyConfig>> = {};
  drawn.forEach((p, i) => {
    const tokens: TokenPolicy[] = [{ mint: MINT, program: 'spl-token', ...p }];
    keys[`k${i}`] = { approval: p.confirm ? 'confirm' : 'auto', approve_above_lamports: 100_000, tokens };
  });
  w = await makeWorld({ keys, timings: { approval_timeout_ms: 10_000 } });
  setMint(w.localnet, MINT, { decimals: 6 });
  for (const [name, k] of Object.entries(w.keys)) {
    sources[name] = setTokenAccount(w.localnet, { mint: MINT, owner: k.pubkey, amount: 1_000n * M });
  }
  receivers[merchant] = setTokenAccount(w.localnet, { mint: MINT, owner: merchant, amount: 0n });
  receivers[stranger] = setTokenAccount(w.localnet, { mint: MINT, owner: stranger, amount: 0n });
}, 60_000);
afterAll(() => w.close());

it('check agrees with sign on random payments under random token policies', async () => {
  const seen = new Set<string>();
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 0, max: KEYS - 1 }),
      amount,
      fc.constantFrom(merchant, merchant, stranger),
      async (i, value, to) => {
        const name = `k${i}`;
        const k = w.keys[name]!;
        const ix = transferChecked(
          { source: sources[name]!, mint: MINT, destination: receivers[to]!, owner: k.pubkey },
          value,
          6,
        );
        const p = payload(k.pubkey, [ix], { summary: `pay ${value}` });
        const checked = await w.engine.check({ payload: p, principal: w.operator });
        const approval = { asked: false };
        const signed = await w.engine.sign({
          payload: p,
          principal: w.operator,
          onProgress: (e) => {
            if (e.stage !== 'approval') return;
            approval.asked = true;
            void w.ledger.decideApproval(e.approval_id, 'approved', 'operator', Math.floor(Date.now() / 1000));
          },
        });
        expect({ value, to, sign: signed.outcome, reason: signed.reason }).toEqual({
          value,
          to,
          sign: checked.outcome === 'ok' ? 'confirmed' : 'refused',
          reason: checked.reason,
        });
        seen.add(`${signed.outcome}:${signed.failed_check ?? ''}${approval.asked ? ':asked' : ''}`);
        // sign asked an operator exactly when check said it would.
        expect(approval.asked).toBe(checked.outcome === 'ok' && checked.would_need_approval === true);
      },
    ),
    { numRuns: 40, seed: 7 },
  );
  // The draw must have reached both sides of the caps, or the property proved little.
  expect([...seen]).toEqual(expect.arrayContaining(['confirmed:', 'refused:limits', 'refused:destinations']));
}, 240_000);
