/**
 * The `encrypted` store: one age file per key (`NAME.age`, 0600 in a 0700 directory), sealed with a passphrase read
 * from a file or an environment variable. The keypair is decrypted once, when the key is opened, and kept in
 * memory like a file key; a new or imported key is encrypted in memory and only the age file reaches the disk.
 */
import path from 'node:path';
import type { EncryptedStoreConfig, KeyConfig } from '../config/types';
import { SignerError } from '../util/errors';
import { openSealedKeypair, sealKeypair } from './age-file';
import { inProcessSigner } from './key-signer';
import { generateKeypairBytes, signerFromKeypairBytes } from './keypair';
import { assertKeyName, readPrivateFile, shredFile, writePrivateFile } from './keyfile';
import { readSecret } from './secret-source';
import type { KeyStore } from './store';

export function encryptedKeyPath(dir: string, name: string): string {
  assertKeyName(name);
  return path.join(dir, `${name}.age`);
}

export function createEncryptedStore(settings: EncryptedStoreConfig, env: NodeJS.ProcessEnv = process.env): KeyStore {
  const { dir } = settings;
  const passphrase = (): string => {
    if (settings.passphrase === null)
      throw new SignerError(
        'key_store',
        'no passphrase is configured for encrypted keys: set key_stores.encrypted.passphrase_file or passphrase_env',
      );
    return readSecret(settings.passphrase, 'passphrase of the encrypted keys', env);
  };

  const seal = async (name: string, keypair: Uint8Array): Promise<string> => {
    const signer = signerFromKeypairBytes(keypair);
    if (!signer)
      throw new SignerError('key_file', "not a Solana keypair: its second half is not the seed's public key");
    const sealed = await sealKeypair(keypair, passphrase(), settings.scrypt_log_n);
    writePrivateFile(dir, encryptedKeyPath(dir, name), sealed);
    return signer.pubkey;
  };

  return {
    kind: 'encrypted',
    async open(key: KeyConfig) {
      const file = encryptedKeyPath(dir, key.name);
      const where = `the encrypted key file of "${key.name}" (${file})`;
      let data: Buffer;
      try {
        data = readPrivateFile(dir, file, key.name);
      } catch (e) {
        throw new SignerError('key_store', (e as Error).message);
      }
      const keypair = await openSealedKeypair(data, passphrase(), where);
      try {
        const signer = signerFromKeypairBytes(keypair);
        if (!signer || signer.pubkey !== key.pubkey)
          throw new SignerError(
            'key_store',
            `${file} holds pubkey ${signer?.pubkey ?? '?'}, but the config says ${key.pubkey}`,
          );
        return inProcessSigner(signer);
      } finally {
        keypair.fill(0);
      }
    },
    async create(name) {
      const keypair = generateKeypairBytes();
      try {
        return await seal(name, keypair);
      } finally {
        keypair.fill(0);
      }
    },
    importKeypair: (name, keypair) => seal(name, keypair),
    destroy: (name) =>
      new Promise<void>((resolve) => {
        shredFile(dir, encryptedKeyPath(dir, name), name);
        resolve();
      }),
    health: () => Promise.resolve('ok'),
    close: () => Promise.resolve(),
  };
}
