/**
 * A Solana keypair sealed in the age format (age-encryption.org/v1) with a passphrase (an scrypt recipient), so an
 * operator can open it with the `age` tool if the signer is gone: `age -d -o keypair.json NAME.age` gives the
 * same keypair JSON the Solana CLI reads. The plaintext exists only in memory.
 */
import { SignerError } from '../util/errors';
import { keypairBytesFromJson } from './keyfile';

type Age = typeof import('age-encryption');
let age: Age | undefined;

/**
 * age-encryption ships only ES modules: Node (24 and later) loads them with require(), and it is loaded on first use
 * because its post-quantum dependencies take ~150 ms to load, which a signer without encrypted keys never needs.
 */
function loadAge(): Age {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose (see above)
  age ??= require('age-encryption') as Age;
  return age;
}

const BINARY_HEADER = 'age-encryption.org/v1\n';
const ARMOR_HEADER = '-----BEGIN AGE ENCRYPTED FILE-----';

export function isAgeFile(data: Uint8Array): boolean {
  const head = Buffer.from(data.subarray(0, ARMOR_HEADER.length)).toString('latin1');
  return head.startsWith(BINARY_HEADER) || head.startsWith(ARMOR_HEADER);
}

/** The age file of a keypair (the keypair JSON text encrypted to the passphrase). */
export async function sealKeypair(keypair: Uint8Array, passphrase: string, scryptLogN: number): Promise<Uint8Array> {
  const encrypter = new (loadAge().Encrypter)();
  encrypter.setPassphrase(passphrase);
  encrypter.setScryptWorkFactor(scryptLogN);
  return encrypter.encrypt(JSON.stringify(Array.from(keypair)));
}

/**
 * The keypair bytes in an age file; throws a `key_store` SignerError that says what is wrong with `where` (a file
 * name): not an age file, a passphrase that does not open it, or contents that are not a Solana keypair.
 */
export async function openSealedKeypair(data: Uint8Array, passphrase: string, where: string): Promise<Uint8Array> {
  if (!isAgeFile(data)) throw new SignerError('key_store', `${where} is not an age file`);
  const decrypter = new (loadAge().Decrypter)();
  decrypter.addPassphrase(passphrase);
  let text: string;
  try {
    text = await decrypter.decrypt(data, 'text');
  } catch (e) {
    const m = e instanceof Error ? e.message : '';
    throw new SignerError(
      'key_store',
      /no identity matched|incorrect passphrase/i.test(m)
        ? `the passphrase does not open ${where} (wrong passphrase, or a file sealed with another one)`
        : `${where} is damaged or not a passphrase-sealed age file (${m.slice(0, 120)})`,
    );
  }
  const bytes = keypairBytesFromJson(text);
  if (!bytes) throw new SignerError('key_store', `${where} opens, but does not hold a Solana keypair`);
  return bytes;
}
