/**
 * The credentials' root key wherever the config keeps it (serve.credentials): a file or a variable holding its
 * printed private key, or a `biscuit_root` key in a key store. A store's root states its public key in the config,
 * so verifying (the service, `token narrow`, `token revoke`) never opens it: only issuing does.
 */
import type { CredentialRootKey, SignerConfig } from '../config/types';
import { openBiscuitRootSeed } from '../keys/biscuit-root';
import { readSecret } from '../keys/secret-source';
import { decodeAddress } from '../util/base58';
import type { BiscuitLib } from './biscuit-lib';
import { rootPublicKey } from './issue';

/** The root public key, printed (`ed25519/<hex>`). */
export function rootPublicKeyOf(
  lib: BiscuitLib,
  root: CredentialRootKey,
  env: NodeJS.ProcessEnv = process.env,
): string {
  if ('key' in root) {
    // The loader checked the pubkey is an address: 32 bytes.
    const bytes = decodeAddress(root.key.pubkey) ?? new Uint8Array(0);
    return `ed25519/${Buffer.from(bytes).toString('hex')}`;
  }
  return rootPublicKey(lib, readSecret(root, 'credentials root key', env));
}

/** The root private key, printed (`ed25519-private/<hex>`), the form the library reads. */
export async function rootPrivateKeyOf(
  root: CredentialRootKey,
  config: Pick<SignerConfig, 'key_dir' | 'key_stores'>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string> {
  if (!('key' in root)) return readSecret(root, 'credentials root key', env);
  const seed = await openBiscuitRootSeed(root.key, config, env);
  try {
    return `ed25519-private/${Buffer.from(seed).toString('hex')}`;
  } finally {
    seed.fill(0);
  }
}
