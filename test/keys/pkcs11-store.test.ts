/**
 * The pkcs11 store against a real SoftHSM2 token: keys generated in the token or imported into it stay there
 * (sensitive, never extractable, their value unreadable), sign with CKM_EDDSA, and a token that goes away makes
 * signs refuse until it is back, without a new store.
 */
import crypto from 'node:crypto';
import * as pkcs11js from 'pkcs11js';
import type { KeyConfig } from '../../src/config/types';
import { generateKeypairBytes, verifySignature } from '../../src/keys/keypair';
import { createPkcs11Store } from '../../src/keys/pkcs11-store';
import type { KeyStore } from '../../src/keys/store';
import { decodeBase58, encodeBase58 } from '../../src/util/base58';
import { firstAnswer } from '../support/async';
import { makeSoftHsmToken, SOFTHSM_MODULE, type SoftHsmToken } from '../support/softhsm';

const keyConfig = (name: string, pubkey: string): KeyConfig => ({
  name,
  class: 'session',
  pubkey,
  profile: null,
  approval: 'auto',
  transfer_to: [],
  extra_programs: [],
  rate_limit_per_minute: 10,
  daily_lamport_cap: 1,
  allow_unattended: false,
  store: 'pkcs11',
});

/** Reads attributes of the private key object labelled `label` through a session of its own. */
function privateKeyAttributes(token: SoftHsmToken, label: string, types: number[]): pkcs11js.AttributeResult[] {
  const p11 = new pkcs11js.PKCS11();
  p11.load(SOFTHSM_MODULE);
  p11.C_Initialize();
  try {
    const slot = p11.C_GetSlotList(true).find((s) => p11.C_GetTokenInfo(s).label.trim() === token.label);
    if (slot === undefined) throw new Error('token not found');
    const session = p11.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION);
    p11.C_Login(session, pkcs11js.CKU_USER, token.pin);
    p11.C_FindObjectsInit(session, [
      { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PRIVATE_KEY },
      { type: pkcs11js.CKA_LABEL, value: label },
    ]);
    const [handle] = p11.C_FindObjects(session, 1);
    p11.C_FindObjectsFinal(session);
    if (handle === undefined) throw new Error('no private key object');
    return p11.C_GetAttributeValue(
      session,
      handle,
      types.map((type) => ({ type })),
    );
  } finally {
    p11.C_Finalize();
  }
}

describe('pkcs11 store on SoftHSM2', () => {
  let token: SoftHsmToken;
  let store: KeyStore;
  const env = { HSM_PIN: '' };

  beforeAll(() => {
    token = makeSoftHsmToken();
    env.HSM_PIN = token.pin;
    store = createPkcs11Store(token.settings({ env: 'HSM_PIN' }), env);
  });
  afterAll(() => store.close());

  it('generates a key in the token that signs with CKM_EDDSA, verifiable with its pubkey', async () => {
    const pubkey = await store.create('made');
    const signer = await store.open(keyConfig('made', pubkey));
    const message = crypto.randomBytes(100);
    const signature = await signer.sign(message);
    expect(verifySignature(decodeBase58(pubkey)!, message, signature)).toBe(true);
  });

  it('imports a keypair whose signatures are the same key', async () => {
    const keypair = generateKeypairBytes();
    const pubkey = encodeBase58(keypair.subarray(32));
    expect(await store.importKeypair('imported', keypair)).toBe(pubkey);
    const signer = await store.open(keyConfig('imported', pubkey));
    const message = Buffer.from('imported key');
    expect(verifySignature(keypair.subarray(32), message, await signer.sign(message))).toBe(true);
  });

  it("signs many messages at once on the pooled sessions, each signature the key's own", async () => {
    const pubkey = await store.create('busy');
    const signer = await store.open(keyConfig('busy', pubkey));
    const messages = Array.from({ length: 32 }, (_, i) => Buffer.from(`message ${i}`));
    const signatures = await Promise.all(messages.map((m) => signer.sign(m)));
    signatures.forEach((sig, i) => expect(verifySignature(decodeBase58(pubkey)!, messages[i]!, sig)).toBe(true));
  });

  it('keeps the private key object sensitive and never extractable, and refuses to read its value', async () => {
    await store.close(); // one user of the module at a time in this process
    for (const label of ['made', 'imported']) {
      const [extractable, sensitive, never] = privateKeyAttributes(token, label, [
        pkcs11js.CKA_EXTRACTABLE,
        pkcs11js.CKA_SENSITIVE,
        pkcs11js.CKA_NEVER_EXTRACTABLE,
      ]);
      expect(extractable?.value[0]).toBe(0);
      expect(sensitive?.value[0]).toBe(1);
      if (label === 'made') expect(never?.value[0]).toBe(1); // an imported key was known outside, by definition
      expect(() => privateKeyAttributes(token, label, [pkcs11js.CKA_VALUE])).toThrow(/CKR_ATTRIBUTE_SENSITIVE/);
    }
  });

  it('refuses a key whose token object holds another pubkey, naming the key', async () => {
    const other = encodeBase58(generateKeypairBytes().subarray(32));
    await expect(store.open(keyConfig('made', other))).rejects.toMatchObject({
      code: 'key_store',
      message: expect.stringMatching(
        /^the PKCS#11 token "t-\w+" holds pubkey \S+ under label "made", but the config says/,
      ) as unknown,
    });
  });

  it('token removed (its directory moved away): signs refuse, health says why, and it signs again once back', async () => {
    const pubkey = await store.create('roams');
    const signer = await store.open(keyConfig('roams', pubkey));
    await signer.sign(Buffer.from('before'));
    token.remove();
    try {
      await expect(signer.sign(Buffer.from('while gone'))).rejects.toMatchObject({
        code: 'key_store',
        message: expect.stringMatching(
          /PKCS#11 token ".*" failed \(C_Sign\w*: CKR_\w+\); nothing was signed/,
        ) as unknown,
      });
      expect(await store.health()).toMatch(/PKCS#11 token ".*" (failed|is not present)/);
    } finally {
      token.restore();
    }
    // Back: the next probe reconnects (reconnect_ms is 50 here), then the same key signs.
    await firstAnswer(
      () => store.health(),
      (h) => h === 'ok',
    );
    const message = Buffer.from('after');
    expect(verifySignature(decodeBase58(pubkey)!, message, await signer.sign(message))).toBe(true);
  });

  it('refuses a wrong PIN and a token label that is not present, naming them', async () => {
    await store.close(); // one user of the module at a time in this process
    const pubkey = encodeBase58(generateKeypairBytes().subarray(32));
    const wrongPin = createPkcs11Store(token.settings({ env: 'HSM_PIN' }), { HSM_PIN: 'not-the-pin' });
    await expect(wrongPin.open(keyConfig('made', pubkey))).rejects.toMatchObject({
      code: 'key_store',
      message: expect.stringMatching(
        /PKCS#11 token "t-\w+" cannot be used: C_Login: CKR_PIN_INCORRECT \(the PIN is not tried again until a restart, so the token does not lock it\); nothing was signed/,
      ) as unknown,
    });
    await wrongPin.close();
    const elsewhere = createPkcs11Store({ ...token.settings({ env: 'HSM_PIN' }), token_label: 'absent' }, env);
    await expect(elsewhere.open(keyConfig('made', pubkey))).rejects.toThrow(
      /the PKCS#11 token "absent" is not present \(module .*libsofthsm2\.so\)/,
    );
    await elsewhere.close();
  });

  it('destroys the key objects in the token', async () => {
    await store.destroy('made');
    await expect(store.open(keyConfig('made', 'x'))).rejects.toThrow(
      /0 private and 0 public key objects labelled "made"/,
    );
  });
});
