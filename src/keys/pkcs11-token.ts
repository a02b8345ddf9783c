/**
 * One PKCS#11 token (an HSM partition, a YubiHSM, a SoftHSM2 token), reached through its vendor's module: logged in
 * once, a pool of sessions so concurrent signs run side by side in the token, and the Ed25519 keys found by label.
 *
 * A token can go away while the signer runs (a device unplugged, a module error, a login lost). Any failed call
 * marks the token down with the reason; signs then refuse at once, naming it, and the next sign or readiness probe
 * (at most once per `reconnect_ms`) finalises the module and connects afresh: modules do not all notice a token
 * that came back on sessions opened before it left (SoftHSM2 does not), so only a fresh C_Initialize is trusted.
 */
import crypto from 'node:crypto';
import * as pkcs11js from 'pkcs11js';
import type { Pkcs11StoreConfig } from '../config/types';
import { decodeBase58, encodeBase58 } from '../util/base58';
import { SignerError } from '../util/errors';
import { verifySignature } from './keypair';
import { readSecret } from './secret-source';

/** PKCS#11 3.0 Ed25519 identifiers (pkcs11js names only 2.40's). */
export const CKM_EC_EDWARDS_KEY_PAIR_GEN = 0x1055;
export const CKM_EDDSA = 0x1057;
export const CKK_EC_EDWARDS = 0x40;
/** CKA_EC_PARAMS of Ed25519: the curve's printable name, `edwards25519`, DER-encoded (accepted by every module we know). */
export const ED25519_PARAMS = Buffer.from('130c656477617264733235353139', 'hex');

type Handle = pkcs11js.Handle;

/** The two objects of one key in the token, found by its label. */
export interface TokenKey {
  label: string;
  pubkey: string;
  privateKey: Handle;
}

interface Connection {
  slot: Handle;
  sessions: Handle[];
  free: Handle[];
  /** Signs waiting for a free session; told to give up when the connection is dropped. */
  waiting: { take: (session: Handle) => void; drop: (why: SignerError) => void }[];
  keys: Map<string, TokenKey>;
}

export interface Pkcs11Token {
  readonly label: string;
  /** Connects if needed, and finds the key (checking its public key and a probe signature). */
  key(label: string, expectedPubkey: string): Promise<TokenKey>;
  sign(label: string, message: Uint8Array): Promise<Uint8Array>;
  /** `ok`, or why the token cannot sign now; when down it tries to reconnect (at most once per reconnect_ms). */
  health(): Promise<string>;
  /** Runs `fn` on a read-write session of a connected token (key creation and destruction). */
  admin<T>(fn: (p11: pkcs11js.PKCS11, session: Handle) => T): Promise<T>;
  close(): void;
}

export function isPkcs11Error(e: unknown): e is pkcs11js.Pkcs11Error {
  return e instanceof Error && typeof (e as { code?: unknown }).code === 'number' && 'method' in e;
}

/** A PKCS#11 failure for a message: `C_Sign: CKR_DEVICE_REMOVED`. */
function describe(e: unknown): string {
  if (isPkcs11Error(e)) return `${e.method}: ${e.message}`;
  return e instanceof Error ? e.message : String(e);
}

/** CKA_EC_POINT is the raw 32 bytes, or (most modules) the same wrapped in a DER OCTET STRING (`04 20 …`). */
export function ed25519PointBytes(point: Buffer): Uint8Array | null {
  if (point.length === 32) return new Uint8Array(point);
  if (point.length === 34 && point[0] === 0x04 && point[1] === 0x20) return new Uint8Array(point.subarray(2));
  return null;
}

export function openPkcs11Token(settings: Pkcs11StoreConfig, env: NodeJS.ProcessEnv = process.env): Pkcs11Token {
  const { module, token_label: label, pin } = settings;
  if (module === null || label === null || pin === null)
    throw new SignerError(
      'key_store',
      'pkcs11 keys need key_stores.pkcs11.module, key_stores.pkcs11.token_label and a PIN (pin_file or pin_env)',
    );
  const p11 = new pkcs11js.PKCS11();
  try {
    p11.load(module);
  } catch (e) {
    throw new SignerError('key_store', `cannot load the PKCS#11 module ${module}: ${describe(e)}`);
  }
  const wanted = new Map<string, string>(); // label → configured pubkey
  let conn: Connection | null = null;
  let down: string | null = 'not connected yet';
  let lastAttempt = 0;
  let connecting: Promise<void> | null = null;
  const inFlight = new Set<Promise<unknown>>();
  let closed = false;
  /** A PIN the token refused: never tried again by this process, since HSMs lock a PIN after a few failures. */
  let pinRefused = false;

  const tokenName = `PKCS#11 token "${label}"`;

  const finalize = (): void => {
    const old = conn;
    conn = null;
    for (const w of old?.waiting.splice(0) ?? []) w.drop(unavailable());
    try {
      p11.C_Finalize();
    } catch {
      // Already finalised, or the module is in no state to answer: the next C_Initialize starts clean either way.
    }
  };

  const findKey = (c: Connection, session: Handle, keyLabel: string): TokenKey => {
    const find = (cls: number): Handle[] => {
      p11.C_FindObjectsInit(session, [
        { type: pkcs11js.CKA_CLASS, value: cls },
        { type: pkcs11js.CKA_LABEL, value: keyLabel },
      ]);
      try {
        return p11.C_FindObjects(session, 2);
      } finally {
        p11.C_FindObjectsFinal(session);
      }
    };
    const privates = find(pkcs11js.CKO_PRIVATE_KEY);
    const publics = find(pkcs11js.CKO_PUBLIC_KEY);
    const [privateKey] = privates;
    const [publicKey] = publics;
    if (privateKey === undefined || publicKey === undefined || privates.length > 1 || publics.length > 1)
      throw new SignerError(
        'key_store',
        `the ${tokenName} holds ${privates.length} private and ${publics.length} public key objects labelled "${keyLabel}"; exactly one of each is needed`,
      );
    const [point] = p11.C_GetAttributeValue(session, publicKey, [{ type: pkcs11js.CKA_EC_POINT }]);
    const bytes = point?.value ? ed25519PointBytes(point.value) : null;
    if (!bytes) throw new SignerError('key_store', `the public key object "${keyLabel}" is not an Ed25519 key`);
    const key: TokenKey = { label: keyLabel, pubkey: encodeBase58(bytes), privateKey };
    c.keys.set(keyLabel, key);
    return key;
  };

  const signOn = async (session: Handle, key: TokenKey, message: Uint8Array): Promise<Uint8Array> => {
    p11.C_SignInit(session, { mechanism: CKM_EDDSA }, key.privateKey);
    return new Uint8Array(await p11.C_SignAsync(session, Buffer.from(message), Buffer.alloc(64)));
  };

  /** Signs a random message and verifies it with the configured public key: a module without EdDSA ends here. */
  const probe = async (session: Handle, key: TokenKey, expected: string): Promise<void> => {
    if (key.pubkey !== expected)
      throw new SignerError(
        'key_store',
        `the ${tokenName} holds pubkey ${key.pubkey} under label "${key.label}", but the config says ${expected}`,
      );
    const message = crypto.randomBytes(32);
    const signature = await signOn(session, key, message);
    if (signature.length !== 64 || !verifySignature(decodeBase58(expected) ?? new Uint8Array(32), message, signature))
      throw new SignerError('key_store', `the ${tokenName} made a signature for "${key.label}" that does not verify`);
  };

  const connect = async (): Promise<void> => {
    lastAttempt = Date.now();
    // Signs still running on the old sessions end (failing) before the module is finalised under them.
    await Promise.allSettled([...inFlight]);
    finalize();
    try {
      p11.C_Initialize({ flags: pkcs11js.CKF_OS_LOCKING_OK });
    } catch (e) {
      // Another part of this process (a test, the CLI beside the engine) initialised the same module: usable.
      if (!(isPkcs11Error(e) && e.code === pkcs11js.CKR_CRYPTOKI_ALREADY_INITIALIZED)) throw e;
    }
    const slot = p11.C_GetSlotList(true).find((s) => p11.C_GetTokenInfo(s).label.replace(/\0/g, '').trim() === label);
    if (slot === undefined) throw new SignerError('key_store', `the ${tokenName} is not present (module ${module})`);
    if (!p11.C_GetMechanismList(slot).includes(CKM_EDDSA))
      throw new SignerError('key_store', `the ${tokenName} does not offer CKM_EDDSA (Ed25519 signatures)`);
    const c: Connection = { slot, sessions: [], free: [], waiting: [], keys: new Map() };
    const first = p11.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION);
    c.sessions.push(first);
    for (let i = 1; i < settings.sessions; i++) c.sessions.push(p11.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION));
    try {
      p11.C_Login(first, pkcs11js.CKU_USER, readSecret(pin, `PIN of the ${tokenName}`, env));
    } catch (e) {
      if (!(isPkcs11Error(e) && e.code === pkcs11js.CKR_USER_ALREADY_LOGGED_IN)) throw e;
    }
    for (const [keyLabel, expected] of wanted) await probe(first, findKey(c, first, keyLabel), expected);
    c.free.push(...c.sessions);
    conn = c;
    down = null;
  };

  /** The live connection, connecting first when down (throttled); throws why the token cannot be used. */
  const live = async (): Promise<Connection> => {
    if (closed) throw new SignerError('key_store', `the ${tokenName} is closed`);
    if (pinRefused) throw unavailable();
    if (conn !== null && down === null) return conn;
    if (connecting === null) {
      if (Date.now() - lastAttempt < settings.reconnect_ms && lastAttempt !== 0) throw unavailable();
      connecting = connect()
        .catch((e: unknown) => {
          finalize();
          down = e instanceof SignerError ? e.message : `the ${tokenName} cannot be used: ${describe(e)}`;
          if (isPkcs11Error(e) && [pkcs11js.CKR_PIN_INCORRECT, pkcs11js.CKR_PIN_LOCKED].includes(e.code)) {
            pinRefused = true;
            down += ' (the PIN is not tried again until a restart, so the token does not lock it)';
          }
        })
        .finally(() => {
          connecting = null;
        });
    }
    await connecting;
    if (conn === null || down !== null) throw unavailable();
    return conn;
  };

  const unavailable = (): SignerError =>
    new SignerError('key_store', `${down ?? `the ${tokenName} is not connected`}; nothing was signed`);

  /** A failure on connection `c`; one on a connection already replaced says nothing about the current one. */
  const markDown = (e: unknown, c: Connection): void => {
    if (c !== conn || down !== null) return;
    down = `the ${tokenName} failed (${describe(e)})`;
    lastAttempt = 0; // the first try to come back may run straight away
  };

  const withSession = async <T>(fn: (c: Connection, session: Handle) => Promise<T>): Promise<T> => {
    const c = await live();
    const session = c.free.pop() ?? (await new Promise<Handle>((take, drop) => c.waiting.push({ take, drop })));
    const run = (async () => {
      try {
        return await fn(c, session);
      } catch (e) {
        if (!(e instanceof SignerError)) markDown(e, c);
        throw e;
      } finally {
        const next = c.waiting.shift();
        if (next) next.take(session);
        else c.free.push(session);
      }
    })();
    inFlight.add(run);
    try {
      return await run;
    } finally {
      inFlight.delete(run);
    }
  };

  return {
    label,
    async key(keyLabel, expectedPubkey) {
      // Looked up and probed on a pooled session; only a key that passed is looked up again on a reconnect.
      const key = await withSession(async (c, session) => {
        const found = c.keys.get(keyLabel) ?? findKey(c, session, keyLabel);
        await probe(session, found, expectedPubkey);
        return found;
      });
      wanted.set(keyLabel, expectedPubkey);
      return key;
    },
    async sign(keyLabel, message) {
      try {
        return await withSession(async (c, session) => {
          const key = c.keys.get(keyLabel);
          if (!key) throw new SignerError('key_store', `no key "${keyLabel}" was opened in the ${tokenName}`);
          return signOn(session, key, message);
        });
      } catch (e) {
        if (e instanceof SignerError) throw e;
        throw new SignerError('key_store', `${down ?? `the ${tokenName} failed (${describe(e)})`}; nothing was signed`);
      }
    },
    async health() {
      try {
        await withSession(async (c, session) => {
          const key = c.keys.values().next().value;
          // A probe signature is what notices a token that went away; with no key yet, the token's info will do.
          if (key) await signOn(session, key, crypto.randomBytes(32));
          else p11.C_GetTokenInfo(c.slot);
        });
        return 'ok';
      } catch (e) {
        return down ?? describe(e);
      }
    },
    async admin(fn) {
      const c = await live();
      const session = p11.C_OpenSession(c.slot, pkcs11js.CKF_SERIAL_SESSION | pkcs11js.CKF_RW_SESSION);
      try {
        return fn(p11, session);
      } finally {
        p11.C_CloseSession(session);
      }
    },
    close() {
      closed = true;
      finalize();
      try {
        p11.close();
      } catch {
        // The library is unloaded at exit anyway.
      }
    },
  };
}
