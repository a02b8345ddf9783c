/**
 * Ed25519 keypairs through node:crypto: the 32-byte seed wrapped in PKCS#8, signing with a cached KeyObject.
 * The KeyObject never leaves this module's holder; nothing here logs or formats secret bytes.
 */
import crypto from 'node:crypto';
import { encodeBase58 } from '../util/base58';

const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_ED25519_PREFIX_LENGTH = 12;

export interface Signer {
  readonly pubkey: string;
  sign(message: Uint8Array): Uint8Array;
}

export function signerFromSeed(seed: Uint8Array): Signer {
  if (seed.length !== 32) throw new Error('an Ed25519 seed is 32 bytes');
  const key = crypto.createPrivateKey({
    key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]),
    format: 'der',
    type: 'pkcs8',
  });
  const pubkeyBytes = publicKeyBytes(key);
  const pubkey = encodeBase58(pubkeyBytes);
  return {
    pubkey,
    sign: (message) => new Uint8Array(crypto.sign(null, message, key)),
  };
}

export function publicKeyBytes(key: crypto.KeyObject): Uint8Array {
  const spki = crypto.createPublicKey(key).export({ format: 'der', type: 'spki' });
  return new Uint8Array(spki.subarray(SPKI_ED25519_PREFIX_LENGTH));
}

/**
 * A Solana keypair (64 bytes: seed then public key). Returns null when the public half does not belong to
 * the seed, which is how a corrupted or forged keypair is told apart.
 */
export function signerFromKeypairBytes(bytes: Uint8Array): Signer | null {
  if (bytes.length !== 64) return null;
  const signer = signerFromSeed(bytes.subarray(0, 32));
  const claimed = encodeBase58(bytes.subarray(32, 64));
  return claimed === signer.pubkey ? signer : null;
}

export function generateKeypairBytes(): Uint8Array {
  const seed = crypto.randomBytes(32);
  const key = crypto.createPrivateKey({
    key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]),
    format: 'der',
    type: 'pkcs8',
  });
  const out = new Uint8Array(64);
  out.set(seed, 0);
  out.set(publicKeyBytes(key), 32);
  seed.fill(0);
  return out;
}

export function verifySignature(pubkey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  const spki = Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), pubkey]);
  const key = crypto.createPublicKey({ key: spki, format: 'der', type: 'spki' });
  return crypto.verify(null, message, key, signature);
}
