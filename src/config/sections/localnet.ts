/**
 * `localnet`: the embedded development chain of `cluster: local` — what it deploys and funds, and how fast it
 * makes blocks. Ignored for any other cluster.
 */
import { validateEntry } from '../fail';
import { section, type Infer } from '../setting';

export const localnetSchema = section({
  localnet: {
    game_programs: {
      doc: '`cluster: local` only: programs deployed on the embedded chain that count as game programs, a list of {label, address}.',
      format: 'object-list',
      default: [],
    },
    player_profile: {
      doc: '`cluster: local` only: the Player Profile program on the embedded chain (for the `vault` check), or null.',
      format: 'address-or-null',
      default: null,
      nullable: true,
    },
    fund: {
      doc: '`cluster: local` only: accounts the embedded chain funds at start, a list of {address, lamports}.',
      format: 'object-list',
      default: [],
    },
    block_ms: {
      doc: '`cluster: local` only: how often the embedded chain makes a block, in ms (a real cluster: about 400).',
      format: 'positive-int',
      default: 400,
      env: 'SIGNER_LOCALNET_BLOCK_MS',
    },
    confirm_after_blocks: {
      doc: '`cluster: local` only: blocks after landing until a transaction is `confirmed` (a real cluster: about 2; finalized comes with it or later).',
      format: 'positive-int',
      default: 1,
      env: 'SIGNER_LOCALNET_CONFIRM_BLOCKS',
    },
  },
});

/** One entry of `localnet.fund:`. */
export const fundEntrySchema = section({
  address: { doc: 'Account to fund (base58).', format: 'address', default: null },
  lamports: { doc: 'Lamports to give it.', format: 'nat-strict', default: null },
});

type Raw = Infer<typeof localnetSchema>['localnet'];

export type FundEntry = Infer<typeof fundEntrySchema>;

/** The embedded chain's settings, resolved; `game_programs` and `player_profile` go into the `local` cluster. */
export type LocalnetConfig = Pick<Raw, 'block_ms' | 'confirm_after_blocks'> & {
  enabled: boolean;
  fund: FundEntry[];
};

export function buildLocalnet(raw: Raw): LocalnetConfig {
  return {
    enabled: true,
    fund: raw.fund.map((f, i) => validateEntry(fundEntrySchema, f, `localnet.fund[${i}]`)),
    block_ms: raw.block_ms,
    confirm_after_blocks: raw.confirm_after_blocks,
  };
}
