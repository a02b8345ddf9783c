/**
 * The `pkcs11` store: Ed25519 keys inside an HSM token, labelled with the key's name. A key is generated in the token
 * (CKM_EC_EDWARDS_KEY_PAIR_GEN) or imported into it, always sensitive and never extractable, so the private key
 * never enters this process again; signing is CKM_EDDSA in the token (pkcs11-token.ts keeps the sessions).
 */
import * as pkcs11js from 'pkcs11js';
import type { KeyConfig, Pkcs11StoreConfig } from '../config/types';
import { encodeBase58 } from '../util/base58';
import { SignerError } from '../util/errors';
import { assertKeyName } from './keyfile';
import { signerFromKeypairBytes } from './keypair';
import {
  CKK_EC_EDWARDS,
  CKM_EC_EDWARDS_KEY_PAIR_GEN,
  ED25519_PARAMS,
  ed25519PointBytes,
  openPkcs11Token,
  type Pkcs11Token,
} from './pkcs11-token';
import type { KeyStore } from './store';

/** Attributes every private key object of ours carries: the token keeps it, signs with it, never lets it out. */
function privateTemplate(name: string): pkcs11js.Template {
  return [
    { type: pkcs11js.CKA_TOKEN, value: true },
    { type: pkcs11js.CKA_PRIVATE, value: true },
    { type: pkcs11js.CKA_LABEL, value: name },
    { type: pkcs11js.CKA_SIGN, value: true },
    { type: pkcs11js.CKA_SENSITIVE, value: true },
    { type: pkcs11js.CKA_EXTRACTABLE, value: false },
  ];
}

function publicTemplate(name: string): pkcs11js.Template {
  return [
    { type: pkcs11js.CKA_TOKEN, value: true },
    { type: pkcs11js.CKA_LABEL, value: name },
    { type: pkcs11js.CKA_VERIFY, value: true },
    { type: pkcs11js.CKA_EC_PARAMS, value: ED25519_PARAMS },
  ];
}

/** Handles of the objects labelled `name` (both classes). */
function objectsLabelled(p11: pkcs11js.PKCS11, session: pkcs11js.Handle, name: string): pkcs11js.Handle[] {
  p11.C_FindObjectsInit(session, [{ type: pkcs11js.CKA_LABEL, value: name }]);
  try {
    return p11.C_FindObjects(session, 16);
  } finally {
    p11.C_FindObjectsFinal(session);
  }
}

export function createPkcs11Store(settings: Pkcs11StoreConfig, env: NodeJS.ProcessEnv = process.env): KeyStore {
  let token: Pkcs11Token | null = null;
  const connected = (): Pkcs11Token => (token ??= openPkcs11Token(settings, env));

  const refuseTaken = (p11: pkcs11js.PKCS11, session: pkcs11js.Handle, name: string): void => {
    if (objectsLabelled(p11, session, name).length > 0)
      throw new SignerError(
        'key_store',
        `the token already holds objects labelled "${name}"; a key is never overwritten`,
      );
  };

  return {
    kind: 'pkcs11',
    async open(key: KeyConfig) {
      const t = connected();
      await t.key(key.name, key.pubkey);
      return { pubkey: key.pubkey, sign: (message) => t.sign(key.name, message) };
    },
    async create(name) {
      assertKeyName(name);
      return connected().admin((p11, session) => {
        refuseTaken(p11, session, name);
        const pair = p11.C_GenerateKeyPair(
          session,
          { mechanism: CKM_EC_EDWARDS_KEY_PAIR_GEN },
          publicTemplate(name),
          privateTemplate(name),
        );
        const [point] = p11.C_GetAttributeValue(session, pair.publicKey, [{ type: pkcs11js.CKA_EC_POINT }]);
        const bytes = point?.value ? ed25519PointBytes(point.value) : null;
        if (!bytes) throw new SignerError('key_store', 'the token made a public key that is not Ed25519');
        return encodeBase58(bytes);
      });
    },
    async importKeypair(name, keypair) {
      assertKeyName(name);
      const signer = signerFromKeypairBytes(keypair);
      if (!signer)
        throw new SignerError('key_file', "not a Solana keypair: its second half is not the seed's public key");
      return connected().admin((p11, session) => {
        refuseTaken(p11, session, name);
        const seed = Buffer.from(keypair.subarray(0, 32));
        try {
          p11.C_CreateObject(session, [
            { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PRIVATE_KEY },
            { type: pkcs11js.CKA_KEY_TYPE, value: CKK_EC_EDWARDS },
            { type: pkcs11js.CKA_EC_PARAMS, value: ED25519_PARAMS },
            { type: pkcs11js.CKA_VALUE, value: seed },
            ...privateTemplate(name),
          ]);
        } finally {
          seed.fill(0);
        }
        p11.C_CreateObject(session, [
          { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PUBLIC_KEY },
          { type: pkcs11js.CKA_KEY_TYPE, value: CKK_EC_EDWARDS },
          // DER OCTET STRING of the 32 key bytes: the form PKCS#11 3.0 gives CKA_EC_POINT.
          { type: pkcs11js.CKA_EC_POINT, value: Buffer.concat([Buffer.from([0x04, 0x20]), keypair.subarray(32)]) },
          ...publicTemplate(name),
        ]);
        return signer.pubkey;
      });
    },
    async destroy(name) {
      assertKeyName(name);
      await connected().admin((p11, session) => {
        const objects = objectsLabelled(p11, session, name);
        if (objects.length === 0) throw new SignerError('key_store', `the token holds no key labelled "${name}"`);
        for (const o of objects) p11.C_DestroyObject(session, o);
      });
    },
    health: () => connected().health(),
    close() {
      token?.close();
      token = null;
      return Promise.resolve();
    },
  };
}
