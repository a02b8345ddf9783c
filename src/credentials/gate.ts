/**
 * The service's credentials, as the HTTP layer uses them: the root public key is found at start (a root key file
 * or variable missing or unreadable stops the service then, not at the first request; a key store's root states its
 * public key in the config, and the service never opens it), and the Biscuit library is loaded with the first credential
 * presented, so a service whose agents all use bearer tokens never loads it. The issued roots and revoked ids are
 * read on each request from the running policy, which a reload replaces: a revocation applies without a restart.
 */
import type { CredentialsConfig } from '../config/types';
import { readSecret } from '../keys/secret-source';
import { biscuitLib } from './biscuit-lib';
import { rootPublicKey } from './issue';
import { rootPublicKeyOf } from './root-key';
import { createCredentialVerifier, type CredentialVerifier, type Verification } from './verifier';

export interface CredentialGate {
  verify(bearer: string): Verification;
}

/**
 * `atStart` gives the root key; `current` the lists in force now (null: none issued, so every credential is
 * refused). A verifier is made again only when the lists themselves were replaced.
 */
export function credentialGate(
  atStart: CredentialsConfig,
  current: () => CredentialsConfig | null = () => atStart,
): CredentialGate {
  const root = atStart.root_key;
  // A file or variable is read now; the library, which derives its public half, loads with the first credential.
  const secret = 'key' in root ? null : readSecret(root, 'credentials root key');
  let publicKey: string | undefined;
  let made: { source: CredentialsConfig | null; verifier: CredentialVerifier } | undefined;
  return {
    verify(bearer) {
      const lib = biscuitLib();
      publicKey ??= secret === null ? rootPublicKeyOf(lib, root) : rootPublicKey(lib, secret);
      const source = current();
      if (made?.source !== source) {
        const verifier = createCredentialVerifier(lib, {
          rootPublicKey: publicKey,
          issued: source?.issued ?? [],
          revoked: source?.revoked ?? [],
          revokedNow: () => current()?.revoked ?? [],
        });
        made = { source, verifier };
      }
      return made.verifier.verify(bearer);
    },
  };
}
