/**
 * What `key show` and key_show say of a key's store. A store is `ok` for a key only when it can sign now and opens
 * that key: a passphrase that does not open the key's file, a token without the key, a key file that is missing,
 * each leaves the store unable to sign with it, however healthy the store is otherwise.
 */

/** ok; key_unavailable: the store cannot open this key; store_unavailable: the store cannot sign now at all. */
export const STORE_STATES = ['ok', 'key_unavailable', 'store_unavailable'] as const;
export type StoreState = (typeof STORE_STATES)[number];

export interface KeyStatus {
  state: StoreState;
  /** `ok`, or what is wrong with the store for this key, for the operator. */
  store: string;
  /** `ok`, or why the store cannot open the key (for the operator: it may name a file). */
  key: string;
}

/** Words of the store's status when only this key fails: why follows in `key`. */
export const CANNOT_OPEN_KEY = 'cannot open this key';

/** The status from the store's health (`ok` or why not) and the key's open (`ok` or the error's message). */
export function keyStatus(health: string, opened: string): KeyStatus {
  if (health !== 'ok') return { state: 'store_unavailable', store: health, key: opened };
  if (opened !== 'ok') return { state: 'key_unavailable', store: CANNOT_OPEN_KEY, key: opened };
  return { state: 'ok', store: 'ok', key: 'ok' };
}
