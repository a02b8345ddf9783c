/**
 * No secret byte string — a key, a partial signer — in any log line, report, error or ledger row that a
 * run of check and sign produces, in any encoding.
 */
import { makeWorld, type World } from '../support/world';
import { keypair, payload, transferInstruction } from '../support/payloads';
import { findLeaks, keyDirSecrets, secretForms } from '../support/secrets';
import { SYSTEM_PROGRAM } from '../../src/solana/programs';
import { errorMessage } from '../../src/util/errors';

describe('secret hygiene of the engine', () => {
  let w: World;
  beforeAll(async () => {
    w = await makeWorld({
      keys: { alpha: {}, wallet: { class: 'wallet', approval: 'confirm' } },
      timings: { approval_timeout_ms: 100 },
    });
  });
  afterAll(() => w.close());

  it('leaks no key or partial signer into reports, errors or the ledger', async () => {
    const alpha = w.keys.alpha!;
    const partials = [keypair(), keypair()];
    const outputs: string[] = [];
    const withPartial = (p: (typeof partials)[number]) =>
      payload(
        alpha.pubkey,
        [
          {
            program_id: SYSTEM_PROGRAM,
            accounts: [
              { pubkey: alpha.pubkey, is_signer: true, is_writable: true },
              { pubkey: alpha.destination, is_signer: false, is_writable: true },
              { pubkey: p.pubkey, is_signer: true, is_writable: false },
            ],
            data: transferInstruction(alpha.pubkey, alpha.destination, 1_000_000).data,
          },
        ],
        { partial_signers: [p.base64] },
      );

    const attempts: (() => Promise<unknown>)[] = [
      () => w.engine.check({ payload: withPartial(partials[0]!), principal: w.operator }),
      () =>
        w.engine.sign({ payload: withPartial(partials[0]!), principal: w.operator, intent: 'with a partial signer' }),
      () => w.engine.sign({ payload: withPartial(partials[1]!), key: 'wallet', principal: w.operator }),
      () => w.engine.sign({ payload: w.transfer('wallet', 1_000_000), principal: w.operator }),
      // Secrets pasted where they do not belong must not be echoed back.
      () => w.engine.check({ payload: payload(partials[1]!.base64, []), principal: w.operator }),
      () =>
        w.engine.check({
          payload: { ...withPartial(partials[1]!), partial_signers: [partials[1]!.base64.slice(0, 40)] },
          principal: w.operator,
        }),
      () => w.engine.keyShow({ principal: w.operator }),
    ];
    for (const attempt of attempts) {
      try {
        outputs.push(JSON.stringify(await attempt()));
      } catch (e) {
        outputs.push(errorMessage(e));
      }
    }
    const confirmed = w.reports.filter((r) => r.outcome === 'confirmed');
    expect(confirmed.length).toBeGreaterThan(0); // the partial-signer sign really went through
    for await (const entry of w.ledger.entries()) outputs.push(JSON.stringify(entry));
    outputs.push(JSON.stringify(await w.ledger.listApprovals()));

    const secrets = [
      ...keyDirSecrets(w.config.key_dir).map((s, i) => ({ label: `key file ${i}`, forms: secretForms(s) })),
      ...partials.map((p, i) => ({
        label: `partial signer ${i}`,
        forms: [...secretForms(p.bytes), p.base64.slice(0, 24)],
      })),
    ];
    expect(findLeaks(outputs.join('\n'), secrets)).toEqual([]);
  });
});
