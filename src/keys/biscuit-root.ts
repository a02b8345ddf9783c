/**
 * Opening a `biscuit_root` key (docs/credentials.md): unlike a signing key, whose store hands out only a signer, the
 * Biscuit library needs the private key itself, so this reads the Ed25519 seed out of the key's age file (or plain
 * key file) with the same checks the stores make: the file's mode, the passphrase, and that it holds the configured
 * pubkey. Only issuing calls it, in the CLI; the service verifies with the public key the config states and never
 * opens the root. The seed is returned to the caller, who wipes it; nothing here formats or logs it.
 */
import type { SignerConfig } from '../config/types';
import type { BiscuitRootKeyConfig } from '../config/sections/key-biscuit-root';
import { defaultKeyStores } from '../config/sections/key-stores';
import { SignerError } from '../util/errors';
import { openSealedKeypair } from './age-file';
import { encryptedKeyPath } from './encrypted-store';
import { keyFilePath, keypairBytesFromJson, readPrivateFile } from './keyfile';
import { signerFromKeypairBytes } from './keypair';
import { readSecret } from './secret-source';

async function keypairOf(
  key: BiscuitRootKeyConfig,
  config: Pick<SignerConfig, 'key_dir' | 'key_stores'>,
  env: NodeJS.ProcessEnv,
): Promise<Uint8Array> {
  if (key.store === 'file') {
    const file = keyFilePath(config.key_dir, key.name);
    const bytes = keypairBytesFromJson(readPrivateFile(config.key_dir, file, key.name).toString('utf8'));
    if (!bytes) throw new SignerError('key_file', `${file} is not a Solana keypair file`);
    return bytes;
  }
  const settings = (config.key_stores ?? defaultKeyStores(config.key_dir)).encrypted;
  if (settings.passphrase === null)
    throw new SignerError(
      'key_store',
      'no passphrase is configured for encrypted keys: set key_stores.encrypted.passphrase_file or passphrase_env',
    );
  const file = encryptedKeyPath(settings.dir, key.name);
  let data: Buffer;
  try {
    data = readPrivateFile(settings.dir, file, key.name);
  } catch (e) {
    throw new SignerError('key_store', (e as Error).message);
  }
  const passphrase = readSecret(settings.passphrase, 'passphrase of the encrypted keys', env);
  return openSealedKeypair(data, passphrase, `the encrypted key file of "${key.name}" (${file})`);
}

/** The root key's 32-byte Ed25519 seed, checked against the configured pubkey; the caller wipes it. */
export async function openBiscuitRootSeed(
  key: BiscuitRootKeyConfig,
  config: Pick<SignerConfig, 'key_dir' | 'key_stores'>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Uint8Array> {
  const keypair = await keypairOf(key, config, env);
  try {
    const signer = signerFromKeypairBytes(keypair);
    if (!signer || signer.pubkey !== key.pubkey)
      throw new SignerError(
        'key_store',
        `the key store's "${key.name}" holds pubkey ${signer?.pubkey ?? '?'}, but the config says ${key.pubkey}`,
      );
    return keypair.slice(0, 32);
  } finally {
    keypair.fill(0);
  }
}
