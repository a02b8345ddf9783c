/**
 * Key files: Solana CLI keypair JSON (64 byte values), 0600 in a 0700 directory.
 * Looser modes are refused on load; a file is created exclusively and synced; destroy overwrites then unlinks.
 */
import fs from 'node:fs';
import path from 'node:path';
import { isValidKeyName } from '../config/sections/keys';
import { SignerError } from '../util/errors';
import { generateKeypairBytes, signerFromKeypairBytes, type Signer } from './keypair';
import { encodeBase58 } from '../util/base58';

export { isValidKeyName };

export function assertKeyName(name: string): void {
  if (!isValidKeyName(name)) {
    throw new SignerError(
      'request_invalid',
      `key name ${JSON.stringify(name)}: use 1 to 64 lowercase letters, digits, '-' or '_'`,
    );
  }
}

export function keyFilePath(keyDir: string, name: string): string {
  assertKeyName(name);
  return path.join(keyDir, `${name}.json`);
}

function assertPrivateMode(p: string, st: fs.Stats): void {
  const mode = st.mode & 0o777;
  if ((mode & 0o077) !== 0) {
    throw new SignerError(
      'key_file',
      `${p} has mode ${mode.toString(8).padStart(3, '0')}; it must not be accessible to group or others (chmod ${st.isDirectory() ? '700' : '600'} ${p})`,
    );
  }
}

function ensureKeyDir(keyDir: string): void {
  fs.mkdirSync(keyDir, { recursive: true, mode: 0o700 });
  assertPrivateMode(keyDir, fs.statSync(keyDir));
}

/** Creates a new key file; never overwrites. Returns the pubkey. */
export function createKeyFile(keyDir: string, name: string): string {
  const bytes = generateKeypairBytes();
  try {
    return writeKeyFile(keyDir, name, bytes);
  } finally {
    bytes.fill(0);
  }
}

/** Writes a Solana keypair (64 bytes, checked) as a new key file; never overwrites. Returns the pubkey. */
export function writeKeyFile(keyDir: string, name: string, keypair: Uint8Array): string {
  const signer = signerFromKeypairBytes(keypair);
  if (!signer) throw new SignerError('key_file', "not a Solana keypair: its second half is not the seed's public key");
  writePrivateFile(keyDir, keyFilePath(keyDir, name), JSON.stringify(Array.from(keypair)));
  return encodeBase58(keypair.subarray(32));
}

/**
 * Writes `data` to a new file (0600, created exclusively, synced) in a private directory (0700, created when
 * missing). Shared by the file and encrypted stores: a key file is never overwritten.
 */
export function writePrivateFile(dir: string, file: string, data: string | Uint8Array): void {
  ensureKeyDir(dir);
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o600);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST')
      throw new SignerError('key_file', `${file} already exists; a key is never overwritten`);
    throw new SignerError('key_file', `cannot create ${file}: ${(e as Error).message}`);
  }
  try {
    if (typeof data === 'string') fs.writeSync(fd, data);
    else fs.writeSync(fd, data);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  syncDir(dir);
}

/** A key's file read after checking that neither it nor its directory is open to group or others. */
export function readPrivateFile(dir: string, file: string, name: string): Buffer {
  let dirStat: fs.Stats;
  try {
    dirStat = fs.statSync(dir);
  } catch {
    throw new SignerError('key_file', `key directory ${dir} does not exist`);
  }
  assertPrivateMode(dir, dirStat);
  let fileStat: fs.Stats;
  try {
    fileStat = fs.lstatSync(file);
  } catch {
    throw new SignerError('key_file', `no key file for "${name}" at ${file}`);
  }
  if (!fileStat.isFile()) throw new SignerError('key_file', `${file} is not a regular file`);
  assertPrivateMode(file, fileStat);
  return fs.readFileSync(file);
}

/** Loads a key file and checks its mode and (when given) that it holds the configured pubkey. */
export function loadKeyFile(keyDir: string, name: string, expectedPubkey?: string): Signer {
  const file = keyFilePath(keyDir, name);
  const signer = parseKeypairJson(readPrivateFile(keyDir, file, name).toString('utf8'));
  if (!signer)
    throw new SignerError(
      'key_file',
      `${file} is not a Solana keypair file (a JSON array of 64 bytes whose second half is the public key)`,
    );
  if (expectedPubkey !== undefined && signer.pubkey !== expectedPubkey) {
    throw new SignerError(
      'key_file',
      `key file for "${name}" has pubkey ${signer.pubkey}, but the config says ${expectedPubkey}`,
    );
  }
  return signer;
}

/** The 64 bytes of a Solana keypair JSON text (checked: the second half is the seed's public key), or null. */
export function keypairBytesFromJson(text: string): Uint8Array | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  if (!Array.isArray(parsed) || parsed.length !== 64) return null;
  if (!parsed.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)) return null;
  const bytes = Uint8Array.from(parsed as number[]);
  if (signerFromKeypairBytes(bytes)) return bytes;
  bytes.fill(0);
  return null;
}

export function parseKeypairJson(text: string): Signer | null {
  const bytes = keypairBytesFromJson(text);
  if (!bytes) return null;
  try {
    return signerFromKeypairBytes(bytes);
  } finally {
    bytes.fill(0);
  }
}

/** Overwrites the file with zeros of the same length, syncs and unlinks it (best effort on SSDs and backups). */
export function destroyKeyFile(keyDir: string, name: string): void {
  shredFile(keyDir, keyFilePath(keyDir, name), name);
}

/** Overwrites a key's file with zeros, syncs and unlinks it. */
export function shredFile(keyDir: string, file: string, name: string): void {
  let size: number;
  try {
    size = fs.lstatSync(file).size;
  } catch {
    throw new SignerError('key_file', `no key file for "${name}" at ${file}`);
  }
  const fd = fs.openSync(file, 'r+');
  try {
    fs.writeSync(fd, Buffer.alloc(size), 0, size, 0);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.unlinkSync(file);
  syncDir(keyDir);
}

function syncDir(dir: string): void {
  try {
    const fd = fs.openSync(dir, 'r');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    // Directory fsync is not supported everywhere; the file itself was synced.
  }
}
