/**
 * A key's `tokens:`: the mints it may spend, each with its caps in base units (docs/policy.md, "Tokens"). The
 * schema reads amounts as numbers or strings; the loader turns them into bigint base units.
 */
import { parseBaseUnits } from '../../util/token-amounts';
import { fail, validateEntry } from '../fail';
import { section, type Infer } from '../setting';

/** One entry of a key's `tokens:`. */
export const tokenPolicySchema = section({
  mint: { doc: 'The mint (base58).', format: 'address', default: null },
  program: {
    doc: '`spl-token` or `token-2022`: the program that owns the mint.',
    format: ['spl-token', 'token-2022'],
    default: 'spl-token',
  },
  per_tx: {
    doc: 'Most one transaction may move out of the key’s accounts of this mint, in base units; null: only per_day.',
    format: 'base-units-or-null',
    default: null,
    nullable: true,
  },
  per_day: {
    doc: 'Most the key may spend or reserve of this mint in 24 h, in base units.',
    format: 'base-units',
    default: null,
  },
  destinations: {
    doc: 'Owners whose token accounts of this mint may receive from the key; null: any owner.',
    format: 'address-list-or-null',
    default: null,
    nullable: true,
  },
  per_destination_per_day: {
    doc: 'Most one owner may receive of this mint from this key in 24 h, in base units; null: no such cap.',
    format: 'base-units-or-null',
    default: null,
    nullable: true,
  },
  approve_above: {
    doc: 'With approval `confirm`: a spend of this mint at or below it signs without an operator, above it an operator approves; null: every spend asks.',
    format: 'base-units-or-null',
    default: null,
    nullable: true,
  },
});

type TokenPolicyEntry = Infer<typeof tokenPolicySchema>;

/** The amounts of an entry, resolved to base units. */
type Amounts = 'per_tx' | 'per_day' | 'per_destination_per_day' | 'approve_above';

/** One mint a key may spend. Amounts are base units (the mint's smallest unit); null: no such cap. */
export type TokenPolicy = Omit<TokenPolicyEntry, Amounts> & {
  [A in Amounts]: A extends 'per_day' ? bigint : bigint | null;
};

/** A key's token policies, amounts as bigint base units; a mint listed twice is an error. */
export function buildTokenPolicies(list: readonly unknown[], where: string): TokenPolicy[] {
  const units = (v: unknown): bigint | null => (v === null ? null : parseBaseUnits(v));
  const policies: TokenPolicy[] = [];
  for (const [i, item] of list.entries()) {
    const e = validateEntry(tokenPolicySchema, item, `${where}[${i}]`);
    if (policies.some((p) => p.mint === e.mint)) fail(`${where}[${i}].mint: ${e.mint} is listed twice`);
    const perDay = units(e.per_day);
    if (perDay === null) fail(`${where}[${i}].per_day: must be set`);
    policies.push({
      mint: e.mint,
      program: e.program,
      per_tx: units(e.per_tx),
      per_day: perDay,
      destinations: e.destinations === null ? null : [...new Set(e.destinations)],
      per_destination_per_day: units(e.per_destination_per_day),
      approve_above: units(e.approve_above),
    });
  }
  return policies;
}
