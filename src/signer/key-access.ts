/**
 * Which configured key a request may use. A token sees only the keys it was granted: a name or a fee payer that is
 * not among them gets the same answer whether or not such a key exists, so a token can neither probe key names
 * nor map a pubkey to a name. The operator (the CLI) may use every key and is told when a name does not exist.
 */
import type { KeyConfig } from '../config/types';
import { SignerError } from '../util/errors';
import { keyNotGrantedRefusal, NAME_THE_KEY, noKeyForFeePayerRefusal } from './policy/rules/key-grant';
import type { Refusal } from './refusals';
import type { Principal } from './types';

export type KeyChoice = { ok: true; key: KeyConfig } | { ok: false; name: string | null; refusal: Refusal };

export interface KeyAccess {
  /** Every configured key, in name order. */
  readonly all: readonly KeyConfig[];
  /**
   * check and sign: the named key, or the one whose pubkey is the payload's fee payer. A transaction another
   * account pays the fee for (x402) needs the key named: no key is chosen for it from its signers.
   */
  forPayload(principal: Principal, named: string | null | undefined, feePayer: string): KeyChoice;
  /** key_show and halt: the named key, or (no name) every key the principal may use, in name order. */
  select(principal: Principal, named: string | null | undefined): KeyConfig[];
  /** The operator's commands (resume): the key by name. */
  byName(name: string): KeyConfig;
}

function unknownKey(name: string): SignerError {
  return new SignerError('key_unknown', `no key ${JSON.stringify(name)} in the config`);
}

export function createKeyAccess(keys: readonly KeyConfig[]): KeyAccess {
  const byName = new Map(keys.map((k) => [k.name, k]));
  const usable = (principal: Principal): KeyConfig[] => {
    if (principal.kind === 'operator') return [...keys];
    const granted = new Set(principal.keys);
    return keys.filter((k) => granted.has(k.name));
  };

  return {
    all: keys,

    forPayload(principal, named, feePayer) {
      const candidates = usable(principal);
      if (named !== undefined && named !== null) {
        const key = candidates.find((k) => k.name === named);
        if (key) return { ok: true, key };
        if (principal.kind === 'operator') throw unknownKey(named);
        return { ok: false, name: named, refusal: keyNotGrantedRefusal(named) };
      }
      const key = candidates.find((k) => k.pubkey === feePayer);
      if (key) return { ok: true, key };
      if (principal.kind === 'operator')
        throw new SignerError(
          'key_unknown',
          `no configured key has pubkey ${feePayer} (the payload's fee payer)${NAME_THE_KEY}`,
        );
      return { ok: false, name: null, refusal: noKeyForFeePayerRefusal(feePayer) };
    },

    select(principal, named) {
      if (named === undefined || named === null) return usable(principal);
      const key = usable(principal).find((k) => k.name === named);
      if (key) return [key];
      if (principal.kind === 'operator') throw unknownKey(named);
      throw new SignerError('key_not_authorized', { key: named });
    },

    byName(name) {
      const key = byName.get(name);
      if (!key) throw unknownKey(name);
      return key;
    },
  };
}
