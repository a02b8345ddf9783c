/**
 * One signer's credentials for the unit tests: a fresh root key, the root credential `planner` for key `demo`, a
 * verifier that knows it, a fixed clock, and ways to append a hand-written block and to verify a credential.
 */
import { biscuitLib } from '../../src/credentials/biscuit-lib';
import { mintRoot, newRootKey, publicKey } from '../../src/credentials/issue';
import { createCredentialVerifier, type VerifiedCredential } from '../../src/credentials/verifier';

export const lib = biscuitLib();
export const root = newRootKey(lib);
export const made = mintRoot(lib, root.privateKey, { name: 'planner', keys: ['demo'] });
export const verifier = createCredentialVerifier(lib, {
  rootPublicKey: root.publicKey,
  issued: [{ name: 'planner', revocation_id: made.revocationId, keys: ['demo'] }],
  revoked: [],
});
export const NOW = new Date('2026-12-06T00:00:00Z');

/** `credential` with one more block of Datalog written as given, signed as any holder could append it. */
export function appendRaw(credential: string, code: string): string {
  const token = lib.Biscuit.fromBase64(credential, publicKey(lib, root.publicKey));
  const block = new lib.BlockBuilder();
  block.addCode(code);
  return token.appendBlock(block).toBase64();
}

/** The verified credential; a refusal fails the test with its message. */
export function verified(credential: string): VerifiedCredential {
  const v = verifier.verify(credential);
  if (!v.ok) throw new Error(v.refusal.message);
  return v.credential;
}
