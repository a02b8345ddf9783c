/**
 * What a token learns about keys it was not granted: nothing. check, sign, key_show and halt answer a key that
 * does not exist exactly as they answer one that exists but is not the token's, and choosing a key by the
 * payload's fee payer never names a key the token may not use.
 */
import { payload, randomAddress, transferInstruction } from '../support/payloads';
import { makeWorld, type World } from '../support/world';

const token = { kind: 'token', name: 't', keys: ['beta'] } as const;

describe('keys a token was not granted', () => {
  let w: World;
  beforeAll(async () => {
    w = await makeWorld({ keys: { alpha: {}, beta: {} } });
  });
  afterAll(() => w.close());

  /** The parts of a refusal that could tell keys apart, with the name the caller gave replaced. */
  const shape = (
    r: {
      outcome: string;
      failed_check: unknown;
      reason: unknown;
      figures: unknown;
      detail: string | null;
      key: string | null;
    },
    name: string,
  ) => ({
    outcome: r.outcome,
    failed_check: r.failed_check,
    reason: r.reason,
    figures: JSON.stringify(r.figures).split(name).join('<named>'),
    key: r.key === name ? '<named>' : r.key,
    detail: r.detail?.split(name).join('<named>'),
  });

  it.each(['check', 'sign'] as const)(
    '%s: an unknown name and an ungranted name get the same refusal',
    async (tool) => {
      const entries = (await w.ledger.tail(1000)).length;
      const ask = (key: string) => w.engine[tool]({ payload: w.transfer('alpha', 1_000_000), key, principal: token });
      const ungranted = await ask('alpha');
      const unknown = await ask('no-such-key');
      expect(shape(ungranted, 'alpha')).toEqual(shape(unknown, 'no-such-key'));
      expect(ungranted).toMatchObject({
        outcome: 'refused',
        failed_check: 'authorized',
        reason: 'key_not_authorized',
        figures: null,
      });
      expect(unknown.detail).toBe('authorized: this token may not use key "no-such-key"');
      expect((await w.ledger.tail(1000)).length).toBe(entries);
    },
  );

  it.each(['check', 'sign'] as const)(
    '%s: a fee payer of an ungranted key is answered like a pubkey no key has, without its name',
    async (tool) => {
      const stranger = randomAddress();
      const ask = (feePayer: string) =>
        w.engine[tool]({
          payload: payload(feePayer, [transferInstruction(feePayer, w.keys.beta!.destination, 1_000_000)]),
          principal: token,
        });
      const ungranted = await ask(w.keys.alpha!.pubkey);
      const unknown = await ask(stranger);
      expect(shape(ungranted, w.keys.alpha!.pubkey)).toEqual(shape(unknown, stranger));
      expect(ungranted).toMatchObject({
        outcome: 'refused',
        failed_check: 'authorized',
        reason: 'no_key_for_fee_payer',
        figures: { fee_payer: w.keys.alpha!.pubkey },
        key: null,
      });
      expect(JSON.stringify(ungranted)).not.toMatch(/alpha/);
    },
  );

  it('key_show and halt refuse an unknown and an ungranted name with the same code and message', async () => {
    for (const call of [
      (key: string) => w.engine.keyShow({ key, principal: token }),
      (key: string) => w.engine.halt({ key, reason: 'probe', principal: token }),
    ]) {
      const errorOf = (key: string) =>
        call(key).then(
          () => null,
          (e: unknown) => ({
            code: (e as { code: string }).code,
            message: (e as Error).message.replace(key, '<named>'),
          }),
        );
      const ungranted = await errorOf('alpha');
      expect(ungranted).toEqual({ code: 'key_not_authorized', message: 'this token may not use key "<named>"' });
      expect(await errorOf('no-such-key')).toEqual(ungranted);
    }
    expect(await w.ledger.getHalt('alpha')).toBeNull();
  });

  it('still tells the operator when a key does not exist', async () => {
    await expect(
      w.engine.check({ payload: w.transfer('alpha', 1), key: 'no-such-key', principal: w.operator }),
    ).rejects.toMatchObject({ code: 'key_unknown' });
  });
});
