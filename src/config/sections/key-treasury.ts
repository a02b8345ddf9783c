/**
 * A key's `treasury:` (docs/treasury.md): the token accounts (SPL Token or Token-2022), owned by a key that is not
 * on this host, that the key spends from as their delegate. The chain then bounds what a stolen agent key can move
 * to the allowance the owner approved, whatever happens to the signer.
 */
import { fail } from '../fail';
import { section, type Infer } from '../setting';

export const treasurySchema = section({
  owner: {
    doc: 'The treasury owner (base58): the wallet that owns the treasury token accounts and signs their allowances elsewhere; null: the key has no treasury.',
    format: 'address-or-null',
    default: null,
    nullable: true,
  },
  accounts: {
    doc: 'The treasury token accounts (base58) the key spends from as delegate; each must be owned by `owner`.',
    format: 'address-list',
    default: [],
  },
  refill_below_percent: {
    doc: 'A `treasury.refill_due` notification is raised (once a UTC day per account) when the allowance left on chain is below this percentage of the planned allowance (1 to 100; 100: any spend).',
    format: 'positive-int',
    default: 50,
  },
});

/** A key's treasury, resolved: present only when an owner is configured. */
export interface TreasuryConfig {
  owner: string;
  accounts: string[];
  /** A refill is due below this percentage of the planned allowance. */
  refill_below_percent: number;
}

/** The treasury of key `name` (pubkey `pubkey`), or undefined when the key has none. */
export function buildTreasury(
  given: Infer<typeof treasurySchema>,
  name: string,
  pubkey: string,
): TreasuryConfig | undefined {
  const where = `keys.${name}.treasury`;
  if (given.owner === null) {
    if (given.accounts.length > 0) fail(`${where}.owner: accounts are listed; set the wallet that owns them`);
    return undefined;
  }
  // The point is that the owner's key is not on this host: the agent key owning its own treasury bounds nothing.
  if (given.owner === pubkey) fail(`${where}.owner: must not be the key itself; use the operator's wallet`);
  if (given.accounts.length === 0) fail(`${where}.accounts: list at least one token account owned by the owner`);
  const twice = given.accounts.find((a, i) => given.accounts.indexOf(a) !== i);
  if (twice !== undefined) fail(`${where}.accounts: ${twice} is listed twice`);
  if (given.refill_below_percent > 100) fail(`${where}.refill_below_percent: at most 100 (a percentage of the plan)`);
  return { owner: given.owner, accounts: [...given.accounts], refill_below_percent: given.refill_below_percent };
}
