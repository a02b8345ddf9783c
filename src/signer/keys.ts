/** Key choice (domain.md §1.5) and authorisation of a principal for a key. */
import type { KeyConfig } from '../config/types';
import { SignerError } from '../util/errors';
import type { Principal } from './types';

export class KeyTable {
  private readonly byName: Map<string, KeyConfig>;

  constructor(readonly keys: readonly KeyConfig[]) {
    this.byName = new Map(keys.map((k) => [k.name, k]));
  }

  get(name: string): KeyConfig | undefined {
    return this.byName.get(name);
  }

  /** A named key, or the first key (in name order) whose pubkey is the payload's fee payer. */
  choose(named: string | null | undefined, feePayer: string): KeyConfig {
    if (named !== undefined && named !== null) {
      const key = this.byName.get(named);
      if (!key) throw new SignerError('key_unknown', `no key ${JSON.stringify(named)} in the config`);
      return key;
    }
    const key = this.keys.find((k) => k.pubkey === feePayer);
    if (!key)
      throw new SignerError('key_unknown', `no configured key has pubkey ${feePayer} (the payload's fee payer)`);
    return key;
  }

  /** The keys a principal may use, in name order. */
  usableBy(principal: Principal): KeyConfig[] {
    if (principal.kind === 'operator') return [...this.keys];
    const allowed = new Set(principal.keys);
    return this.keys.filter((k) => allowed.has(k.name));
  }
}

export function mayUse(principal: Principal, keyName: string): boolean {
  return principal.kind === 'operator' || principal.keys.includes(keyName);
}

export function notAuthorizedMessage(keyName: string): string {
  return `this token may not use key ${JSON.stringify(keyName)}`;
}
