/**
 * The same engine flows with keys in each store (file, encrypted, pkcs11 on a real SoftHSM2 token): a transfer
 * signed and sent confirms on the embedded chain, a sign_only returns bytes whose signature is the key's, and an
 * off-chain sign-in text is signed by the key. Only the store differs; the engine never knows which one it used.
 */
import { getTransactionDecoder } from '@solana/kit';
import { verifySignature } from '../../src/keys/keypair';
import type { KeyStoreKind } from '../../src/config/types';
import { decodeAddress, decodeBase58 } from '../../src/util/base58';
import { balanceOf, makeWorld, type World } from '../support/world';

describe.each<KeyStoreKind>(['file', 'encrypted', 'pkcs11'])('keys in the %s store', (store) => {
  let w: World;
  beforeAll(async () => {
    w = await makeWorld({ store, keys: { alpha: { sign_messages: true } } });
  });
  afterAll(() => w.close());

  it('signs a transfer that confirms on the chain', async () => {
    const { destination } = w.keys.alpha!;
    const report = await w.engine.sign({ payload: w.transfer('alpha', 1_000_000), principal: w.operator });
    expect(report).toMatchObject({ outcome: 'confirmed', failed_check: null });
    expect(await balanceOf(w, destination)).toBe(1_000_000);
  });

  it('signs only, returning a transaction that carries the key’s signature over its message', async () => {
    const report = await w.engine.sign({
      payload: w.transfer('alpha', 2_000_000),
      mode: 'sign_only',
      principal: w.operator,
    });
    expect(report.outcome).toBe('signed');
    const tx = getTransactionDecoder().decode(Buffer.from(report.signed_transaction!, 'base64'));
    const signature = tx.signatures[w.keys.alpha!.pubkey as keyof typeof tx.signatures];
    expect(signature).toBeTruthy();
    expect(verifySignature(decodeAddress(w.keys.alpha!.pubkey)!, new Uint8Array(tx.messageBytes), signature!)).toBe(
      true,
    );
  });

  it('signs a sign-in text with the key', async () => {
    const text = `example.com wants you to sign in with your Solana account:\n${w.keys.alpha!.pubkey}\n\nNonce: 1`;
    const report = await w.engine.sign({
      payload: { version: 'message', format: 'text', message: text, summary: 'log in', signer: w.keys.alpha!.pubkey },
      principal: w.operator,
    });
    expect(report.outcome).toBe('signed');
    const signature = decodeBase58(report.signature!)!;
    expect(verifySignature(decodeAddress(w.keys.alpha!.pubkey)!, new TextEncoder().encode(text), signature)).toBe(true);
  });

  it('is ready, naming no key problem', async () => {
    expect(await w.engine.ready()).toMatchObject({ ok: true, detail: { keys: 'ok' } });
  });
});
