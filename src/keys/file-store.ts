/** The `file` store: a plaintext Solana keypair file per key (0600 in a 0700 directory), the embedded default. */
import type { KeyConfig } from '../config/types';
import { inProcessSigner } from './key-signer';
import { assertKeyName, createKeyFile, destroyKeyFile, loadKeyFile, writeKeyFile } from './keyfile';
import type { KeyStore } from './store';

/** The file functions are synchronous: their errors become rejections, as every store's are. */
const settle = <T>(fn: () => T): Promise<T> => new Promise((resolve) => resolve(fn()));

export function createFileStore(keyDir: string): KeyStore {
  return {
    kind: 'file',
    open: (key: KeyConfig) => settle(() => inProcessSigner(loadKeyFile(keyDir, key.name, key.pubkey))),
    create: (name) => settle(() => createKeyFile(keyDir, name)),
    importKeypair: (name, keypair) =>
      settle(() => {
        assertKeyName(name);
        return writeKeyFile(keyDir, name, keypair);
      }),
    destroy: (name) => settle(() => destroyKeyFile(keyDir, name)),
    health: () => Promise.resolve('ok'),
    close: () => Promise.resolve(),
  };
}
