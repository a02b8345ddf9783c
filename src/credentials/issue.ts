/**
 * Making credentials: the root key pair, a root credential the signer issues, and a narrowed one made from any
 * credential offline (no signer contacted: an agent's own code does it through `sa-forge-signer/delegate`).
 * Keys travel as the library prints them: `ed25519-private/<hex>` and `ed25519/<hex>`.
 */
import { SignerError } from '../util/errors';
import type { BiscuitLib } from './biscuit-lib';
import { narrowingChecks, rootBlock, type Narrowing } from './checks';
import { failureKind } from './refusal';

export interface MadeCredential {
  /** The credential, URL-safe base64: the bearer value. */
  credential: string;
  /** The revocation id of the block just made (for a root, what `serve.credentials.issued` lists). */
  revocationId: string;
}

const PRIVATE_PREFIX = 'ed25519-private/';
const PUBLIC_PREFIX = 'ed25519/';

function privateKey(lib: BiscuitLib, text: string) {
  const hex = text.trim();
  if (!hex.startsWith(PRIVATE_PREFIX) || !/^[0-9a-f]{64}$/.test(hex.slice(PRIVATE_PREFIX.length)))
    throw new SignerError('config_invalid', `the credential root key is not an ${PRIVATE_PREFIX}<64 hex> key`);
  return lib.PrivateKey.fromString(hex);
}

/** A public key from its printed form (`ed25519/<hex>`, or the bare hex). */
export function publicKey(lib: BiscuitLib, text: string) {
  const hex = text.trim().replace(PUBLIC_PREFIX, '');
  if (!/^[0-9a-f]{64}$/.test(hex))
    throw new SignerError('request_invalid', `the root public key is not an ${PUBLIC_PREFIX}<64 hex> key`);
  return lib.PublicKey.fromString(hex, lib.SignatureAlgorithm.Ed25519);
}

/** A new root key pair, printed. */
export function newRootKey(lib: BiscuitLib): { privateKey: string; publicKey: string } {
  const pair = new lib.KeyPair(lib.SignatureAlgorithm.Ed25519);
  return { privateKey: pair.getPrivateKey().toString(), publicKey: pair.getPublicKey().toString() };
}

/** The public half of a printed root private key. */
export function rootPublicKey(lib: BiscuitLib, rootPrivateKey: string): string {
  return lib.KeyPair.fromPrivateKey(privateKey(lib, rootPrivateKey)).getPublicKey().toString();
}

/** A root credential: its name, the keys it may use, its expiry and its daily budget if any. */
export function mintRoot(
  lib: BiscuitLib,
  rootPrivateKey: string,
  root: { name: string; keys: readonly string[]; expiresAt?: Date; perDayLamports?: number },
): MadeCredential {
  const builder = lib.Biscuit.builder();
  builder.addCode(rootBlock(root.name, root.keys, root.expiresAt, root.perDayLamports));
  const token = builder.build(privateKey(lib, rootPrivateKey));
  const ids = (token.getRevocationIdentifiers() as unknown[]).map(String);
  return { credential: token.toBase64(), revocationId: ids[0] ?? '' };
}

/** `credential` parsed once its signature chain verifies against `rootPublic`; `what` names it in the error. */
function verifiedCredential(lib: BiscuitLib, credential: string, rootPublic: string, what: string) {
  try {
    return lib.Biscuit.fromBase64(credential.trim(), publicKey(lib, rootPublic));
  } catch (e) {
    if (e instanceof SignerError) throw e;
    throw new SignerError(
      'request_invalid',
      `${what} does not verify against that root public key (${failureKind(e)})`,
    );
  }
}

/**
 * The revocation ids of a credential's blocks, root first, once its chain verifies against the root public key:
 * what revoking it (its last block) lists, without trusting ids a forged chain would claim.
 */
export function credentialRevocationIds(lib: BiscuitLib, credential: string, rootPublic: string): string[] {
  const token = verifiedCredential(lib, credential, rootPublic, 'the credential');
  try {
    return (token.getRevocationIdentifiers() as unknown[]).map(String);
  } finally {
    token.free();
  }
}

/** `credential` with one more block holding the narrowing's checks; the root public key verifies it first. */
export function narrowCredential(
  lib: BiscuitLib,
  credential: string,
  rootPublic: string,
  narrowing: Narrowing,
): MadeCredential {
  const checks = narrowingChecks(narrowing);
  const token = verifiedCredential(lib, credential, rootPublic, 'the credential to narrow');
  const block = new lib.BlockBuilder();
  block.addCode(checks.map((c) => `${c};\n`).join(''));
  const narrowed = token.appendBlock(block);
  const ids = (narrowed.getRevocationIdentifiers() as unknown[]).map(String);
  return { credential: narrowed.toBase64(), revocationId: ids[ids.length - 1] ?? '' };
}
