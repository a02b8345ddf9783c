/**
 * The service's credentials, as the HTTP layer uses them: the root key is read at start (a missing or unreadable one
 * stops the service then, not at the first request), and the Biscuit library is loaded with the first credential
 * presented, so a service whose agents all use bearer tokens never loads it.
 */
import type { CredentialsConfig } from '../config/types';
import { readSecret } from '../keys/secret-source';
import { biscuitLib } from './biscuit-lib';
import { rootPublicKey } from './issue';
import { createCredentialVerifier, type CredentialVerifier, type Verification } from './verifier';

export interface CredentialGate {
  verify(bearer: string): Verification;
}

export function credentialGate(config: CredentialsConfig): CredentialGate {
  const rootKey = readSecret(config.root_key, 'credentials root key');
  let verifier: CredentialVerifier | undefined;
  return {
    verify(bearer) {
      if (verifier === undefined) {
        const lib = biscuitLib();
        verifier = createCredentialVerifier(lib, {
          rootPublicKey: rootPublicKey(lib, rootKey),
          issued: config.issued,
          revoked: config.revoked,
        });
      }
      return verifier.verify(bearer);
    },
  };
}
