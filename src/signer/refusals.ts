/**
 * Why a check or sign did not sign, for a program to act on: each refusal's stable `reason`, the check it belongs
 * to, what it means, what an agent should do about it, and the figures it carries. This table is the only list:
 * the report's type, the tools' output schema, the `checks` resource and docs/reports.md come from it or are
 * tested against it. The English `detail` says the same for a person; a program reads `reason` and `figures`.
 */
import type { CheckName } from './vocabulary';

/** How a figure is written: lamports are numbers, token base units (u64) decimal strings, addresses strings. */
type FigureType = 'amount' | 'integer' | 'string';

/** Every figure a refusal can carry, named the same whichever refusal carries it. */
export const FIGURES = {
  spent: {
    type: 'amount',
    meaning: 'spent or reserved in the last 24 h (lamports, or base units of `mint`)',
  },
  requested: {
    type: 'amount',
    meaning: 'what this transaction would spend, pay in fees, or move (lamports, or base units of `mint`)',
  },
  received: { type: 'amount', meaning: '`destination` received of `mint` in the last 24 h (base units)' },
  cap: { type: 'amount', meaning: 'the limit it would pass (lamports, base units of `mint`, or signs per minute)' },
  signs_last_minute: { type: 'integer', meaning: 'signs of the key in the last minute' },
  mint: { type: 'string', meaning: 'the mint; amounts are then its base units, as decimal strings' },
  destination: { type: 'string', meaning: 'the owner or account that would receive' },
  account: { type: 'string', meaning: 'the account at fault (a signer, an owner, a writable account)' },
  fee_payer: { type: 'string', meaning: "the payload's fee payer" },
  program: { type: 'string', meaning: 'the program called' },
  instruction: { type: 'integer', meaning: 'the index of the instruction at fault' },
  token_op: { type: 'string', meaning: 'the authority operation, as `allow_token_ops` names it' },
  signature_slot: { type: 'integer', meaning: 'the index of the signature slot at fault' },
  signature: { type: 'string', meaning: 'the transaction signature' },
  blockhash: { type: 'string', meaning: "the transaction's blockhash" },
  genesis_hash: { type: 'string', meaning: "the RPC node's genesis hash" },
  approval_id: { type: 'string', meaning: "the operator's approval request" },
  approved: {
    type: 'amount',
    meaning:
      'what the operators approved of it (lamports, or base units of `mint`; credited to `destination` if named)',
  },
  by: { type: 'string', meaning: 'who halted the key' },
  price_account: { type: 'string', meaning: 'the Pyth price account read' },
  feed_id: { type: 'string', meaning: 'the Pyth feed id the policy expects (64 hex digits)' },
  account_feed_id: { type: 'string', meaning: 'the feed id the price account carries instead' },
  owner: { type: 'string', meaning: 'the program that owns the price account' },
  verification: {
    type: 'string',
    meaning: "the price's Wormhole verification (`Full`, or `Partial` with the signatures checked)",
  },
  publish_time: { type: 'integer', meaning: 'when Pyth published the price (unix seconds)' },
  clock_time: { type: 'integer', meaning: "the cluster's clock (unix seconds), read with the price" },
  age_s: { type: 'integer', meaning: "the price's age on the cluster's clock (seconds)" },
  max_age_s: { type: 'integer', meaning: 'the oldest price accepted (`prices.max_age_s`, seconds)' },
  price: { type: 'string', meaning: 'the price, in dollars' },
  confidence: { type: 'string', meaning: "the half-width of the price's confidence interval, in dollars" },
  confidence_bps: { type: 'integer', meaning: 'the confidence interval as basis points of the price, rounded up' },
  max_confidence_bps: { type: 'integer', meaning: 'the widest interval accepted (`prices.max_confidence_bps`)' },
  usd_spent: {
    type: 'string',
    meaning: 'dollars spent or reserved in the last 24 h, as recorded when each sign was valued',
  },
  usd_requested: {
    type: 'string',
    meaning:
      'what this transaction takes out of the key in dollars (SOL and every mint it lowers, at price + confidence)',
  },
  usd_cap: {
    type: 'string',
    meaning:
      "the dollar limit it would pass (`usd.per_tx`, `usd.per_day`, or a credential block's daily dollar budget)",
  },
  block: { type: 'integer', meaning: 'the block of the credential presented whose limit refused (0: its root)' },
  revocation_id: { type: 'string', meaning: "that block's revocation id (hex)" },
} as const satisfies Record<string, { type: FigureType; meaning: string }>;

export type FigureName = keyof typeof FIGURES;
type Written<T extends FigureType> = T extends 'amount' ? number | string : T extends 'integer' ? number : string;
/** A refusal's figures: only those that apply are present. */
export type RefusalFigures = { [K in FigureName]?: Written<(typeof FIGURES)[K]['type']> };

interface ReasonSpec {
  /** The check it reports in `failed_check`; null for an outcome that is not a refusal (`simulation_failed`). */
  check: CheckName | null;
  meaning: string;
  /** What the agent should do about it. */
  action: string;
  /** The figures it carries, when they are known. */
  figures: readonly FigureName[];
}

const ASK = 'ask the operator';

/** Every reason, grouped by check in the order the checks run. */
export const REASONS = {
  key_not_authorized: {
    check: 'authorized',
    meaning: 'your token may not use the named key',
    action: 'use a key `key_show` lists',
    figures: [],
  },
  no_key_for_fee_payer: {
    check: 'authorized',
    meaning: "none of your token's keys has the payload's fee payer as pubkey",
    action: 'build with your key as fee payer, or name the key with `key` when another account pays (x402)',
    figures: ['fee_payer'],
  },
  sign_only_not_allowed: {
    check: 'authorized',
    meaning: 'mode `sign_only` on a key configured `sign_only: false`',
    action: 'use mode `send`',
    figures: [],
  },
  messages_not_allowed: {
    check: 'authorized',
    meaning: 'a message payload on a key without `sign_messages`',
    action: `use a key whose \`key_show\` says \`sign_messages: true\`, or ${ASK}`,
    figures: [],
  },
  credential_limit: {
    check: 'authorized',
    meaning:
      'a spend check of the credential presented refused what the simulation moves (`detail` names its block and check)',
    action: 'spend less, or pay a destination the credential allows; or ask its giver for one that allows it',
    figures: ['requested', 'destination', 'usd_requested'],
  },
  credential_unpriced: {
    check: 'authorized',
    meaning:
      "the credential presented limits dollars (`block`: its first block that does) but this transaction's spend could not be valued (no price for what it spends); it is never let through unpriced",
    action: "use a key the operator prices (`prices.feeds`, the key's `usd`), or a credential without dollar limits",
    figures: ['block', 'requested'],
  },
  fee_payer_not_key: {
    check: 'fee_payer',
    meaning: "the payload's (or compiled message's) fee payer is not the signing key",
    action: 'build with the key as fee payer, or name the key that is',
    figures: ['fee_payer'],
  },
  no_accounts: {
    check: 'fee_payer',
    meaning: 'the message has no accounts, so no fee payer',
    action: 'build the transaction again',
    figures: [],
  },
  key_not_a_signer: {
    check: 'fee_payer',
    meaning: 'the key is neither the fee payer nor a signer of the transaction (payload v2)',
    action: 'name the key that signs it, or add it as a signer',
    figures: ['fee_payer'],
  },
  foreign_fee_payer_needs_sign_only: {
    check: 'fee_payer',
    meaning: 'mode `send` on a transaction another account pays the fee for',
    action: 'use mode `sign_only` and let the fee payer sign and send it',
    figures: ['fee_payer'],
  },
  key_set_to_deny: {
    check: 'approval',
    meaning: "the key's approval mode is `deny`",
    action: `use another key; only the operator can change it`,
    figures: [],
  },
  approval_rejected: {
    check: 'approval',
    meaning: 'an operator rejected the sign',
    action: `do not retry it unchanged; ${ASK} why`,
    figures: ['approval_id'],
  },
  approval_timeout: {
    check: 'approval',
    meaning: 'no operator approved the sign in time',
    action: `${ASK}, then sign again`,
    figures: ['approval_id'],
  },
  approval_abandoned: {
    check: 'approval',
    meaning: 'the request went away (disconnected, gave up) while it waited for an operator',
    action: 'keep the connection open until the sign ends, then sign again',
    figures: ['approval_id'],
  },
  approval_superseded: {
    check: 'approval',
    meaning: 'the same payload was signed again, and that later sign waits on the approval now',
    action: 'wait for the answer of the later sign; it is the one that can send',
    figures: ['approval_id'],
  },
  approval_figures_changed: {
    check: 'approval',
    meaning:
      'after the approval, the transaction would spend, credit or call more than the operators approved (state changed while they decided)',
    action: 'sign again: a new approval shows the new figures',
    figures: ['approval_id', 'requested', 'approved', 'mint', 'destination', 'program', 'fee_payer'],
  },
  halted: {
    check: 'halted',
    meaning: 'someone halted the key (who, when and why are in `detail`)',
    action: 'stop and tell the operator; only a human can resume it',
    figures: ['by'],
  },
  wrong_cluster: {
    check: 'cluster',
    meaning: "the RPC node is not on this signer's cluster (its genesis hash differs)",
    action: `${ASK}: the RPC URL is wrong`,
    figures: ['genesis_hash'],
  },
  blockhash_expired: {
    check: 'cluster',
    meaning: "the transaction's blockhash has expired or is from another cluster (payload v2)",
    action: "fetch a fresh blockhash from the signer's cluster and build again, or set `replace_blockhash: true`",
    figures: ['blockhash'],
  },
  signature_in_flight: {
    check: 'cluster',
    meaning: 'this exact transaction is already signed for another request and has no outcome yet',
    action: 'for one payment, the other request carries it; for a second, sign again after the next block',
    figures: ['signature'],
  },
  invalid_signature: {
    check: 'signers',
    meaning: "another signer's signature does not verify against the message (payload v2)",
    action: 'have that signer sign the exact message; never edit a signed transaction',
    figures: ['signature_slot', 'account'],
  },
  signature_slot_empty: {
    check: 'signers',
    meaning: "another signer's slot is empty (payload v2)",
    action: 'have every other signer sign before handing the transaction over',
    figures: ['signature_slot', 'account'],
  },
  replace_blockhash_voids_signature: {
    check: 'signers',
    meaning: "`replace_blockhash` would void another signer's signature",
    action: 'leave `replace_blockhash` false and sign on a valid blockhash',
    figures: ['account'],
  },
  partial_signer_is_key: {
    check: 'signers',
    meaning: 'a partial signer is the signing key itself',
    action: 'build again without the key among the partial signers',
    figures: [],
  },
  partial_signer_not_required: {
    check: 'signers',
    meaning: 'a partial signer is not a signer of the transaction',
    action: 'build again: pass only the new accounts that must sign',
    figures: ['account'],
  },
  required_signer_unavailable: {
    check: 'signers',
    meaning: 'a required signer is neither the key nor a partial signer',
    action: "build again: the builder supplies the new accounts' partial signers",
    figures: ['account'],
  },
  message_signer_not_key: {
    check: 'signers',
    meaning: "a message payload's `signer` is not the named key",
    action: 'name the key whose pubkey is `signer`',
    figures: ['account'],
  },
  durable_nonce: {
    check: 'system',
    meaning: 'a durable-nonce transaction (first instruction AdvanceNonceAccount)',
    action: 'build it on a recent blockhash',
    figures: [],
  },
  system_instruction_malformed: {
    check: 'system',
    meaning: 'a System instruction is too short or misses an account',
    action: 'build the instruction again',
    figures: ['instruction'],
  },
  system_instruction_not_allowed: {
    check: 'system',
    meaning: 'a System instruction other than Transfer',
    action: 'create accounts through the game programs; only transfers are signed',
    figures: ['instruction'],
  },
  transfer_destination_not_allowed: {
    check: 'system',
    meaning: "a System transfer to an address not in the key's `transfer_to`",
    action: 'transfer only to the destinations `key_show` lists',
    figures: ['instruction', 'destination'],
  },
  lookup_table_invalid: {
    check: 'lookup_tables',
    meaning: 'a lookup table is missing, not a table, deactivated, or shorter than an index used (payload v2)',
    action: 'use an active table on this cluster that holds every address you index',
    figures: [],
  },
  lookup_table_changed: {
    check: 'lookup_tables',
    meaning: 'a lookup table changed between check and sign',
    action: 'sign again; keep the tables you use unchanged while signing',
    figures: [],
  },
  program_missing: {
    check: 'programs',
    meaning: 'an instruction has no program id',
    action: 'build the transaction again',
    figures: ['instruction'],
  },
  program_not_allowed: {
    check: 'programs',
    meaning: "an instruction calls a program outside the cluster's allow-list and the key's `extra_programs`",
    action: `use a program \`key_show\` lists, or ${ASK} to allow it`,
    figures: ['instruction', 'program'],
  },
  token_instruction_refused: {
    check: 'tokens',
    meaning: 'a token instruction the signer never signs (mint set-up, multisig, Token-2022 extensions)',
    action: 'move tokens with Transfer or TransferChecked',
    figures: ['instruction'],
  },
  token_op_not_allowed: {
    check: 'tokens',
    meaning: "an authority operation on tokens the key's `allow_token_ops` does not list",
    action: `move tokens with Transfer or TransferChecked; only the operator can allow \`token_op\``,
    figures: ['token_op'],
  },
  ata_instruction_not_allowed: {
    check: 'tokens',
    meaning: 'an Associated Token instruction other than create or create-idempotent',
    action: 'only create associated token accounts',
    figures: ['instruction'],
  },
  ata_create_malformed: {
    check: 'tokens',
    meaning: 'an associated-token create without the real System and token programs',
    action: 'build the create instruction with the System and SPL Token or Token-2022 programs',
    figures: ['instruction'],
  },
  mint_not_listed: {
    check: 'tokens',
    meaning: "the transaction spends a mint that is not in the key's token policy",
    action: `spend only the mints \`key_show\` lists under \`policy.tokens\`, or ${ASK}`,
    figures: ['mint', 'requested'],
  },
  mint_program_mismatch: {
    check: 'tokens',
    meaning: "the mint belongs to another token program than the key's policy names",
    action: ASK,
    figures: ['mint'],
  },
  mint_unreadable: {
    check: 'tokens',
    meaning: 'the mint could not be read from the chain',
    action: 'try again; if it persists, check the mint address',
    figures: ['mint'],
  },
  mint_extension_not_accounted: {
    check: 'tokens',
    meaning: 'a Token-2022 mint has an extension the signer cannot account for (named in `detail`)',
    action: 'use another mint',
    figures: ['mint'],
  },
  vault_instruction_malformed: {
    check: 'vault',
    meaning: "a session key's Player Profile instruction is too short to tell what it does",
    action: 'build the instruction again',
    figures: ['instruction'],
  },
  vault_withdrawal: {
    check: 'vault',
    meaning: "a session key's Player Profile instruction withdraws the profile vault",
    action: 'vault withdrawals need the wallet key (the human)',
    figures: ['instruction'],
  },
  partial_signer_exists: {
    check: 'new_accounts',
    meaning: "a partial signer's account already exists on-chain",
    action: 'build again with fresh accounts',
    figures: ['account'],
  },
  ata_accounts_missing: {
    check: 'ata_owners',
    meaning: 'an Associated Token instruction misses accounts',
    action: 'build the create instruction again',
    figures: ['instruction'],
  },
  ata_owner_not_allowed: {
    check: 'ata_owners',
    meaning: 'a token account would be created for an owner that is not the key, its destination or a game account',
    action: 'create token accounts only for yourself, your destinations, or game accounts',
    figures: ['account'],
  },
  writable_not_allowed: {
    check: 'destinations',
    meaning: 'the transaction writes an account outside the key, its `transfer_to` and its `writable_allow`',
    action: `touch only the accounts the key allows, or ${ASK}`,
    figures: ['account'],
  },
  destination_not_allowed: {
    check: 'destinations',
    meaning: "the simulation pays lamports to an account not in the key's `transfer_to`",
    action: 'pay only the destinations `key_show` lists',
    figures: ['destination', 'requested'],
  },
  token_destination_not_allowed: {
    check: 'destinations',
    meaning: "the simulation pays a mint to an owner not in that mint's `destinations`",
    action: 'pay only the owners `key_show` lists for the mint (an x402 `payTo` must be one)',
    figures: ['mint', 'destination', 'requested'],
  },
  price_unavailable: {
    check: 'price',
    meaning:
      'a price the dollar caps need is missing: none configured for the asset, no account at the configured address, or not a usable price',
    action: `try again; if it persists, ${ASK} to check \`prices.feeds\``,
    figures: ['price_account', 'feed_id', 'owner'],
  },
  price_unverified: {
    check: 'price',
    meaning:
      'the price account is not the configured feed: owned by another program than the Pyth receiver, carrying another feed id, or verified by fewer guardians than `Full`',
    action: `${ASK}: the configured price account cannot be trusted`,
    figures: ['price_account', 'feed_id', 'account_feed_id', 'owner', 'verification'],
  },
  price_stale: {
    check: 'price',
    meaning: "the price is older than `prices.max_age_s` on the cluster's clock",
    action: `try again shortly (the feed may be updating); if it persists, ${ASK}: the price account is not kept fresh`,
    figures: ['price_account', 'publish_time', 'clock_time', 'age_s', 'max_age_s'],
  },
  price_uncertain: {
    check: 'price',
    meaning: "the price's confidence interval is wider than `prices.max_confidence_bps` of the price",
    action: 'try again when the market is calmer',
    figures: ['price_account', 'price', 'confidence', 'confidence_bps', 'max_confidence_bps'],
  },
  rate_limit: {
    check: 'limits',
    meaning: "the key's signs in the last minute reached its `rate_limit_per_minute`",
    action: 'wait a minute and sign again',
    figures: ['signs_last_minute', 'cap'],
  },
  fee_cap: {
    check: 'limits',
    meaning: "the fees the transaction may pay are above the key's `max_fee_lamports`",
    action: 'lower the compute unit price or limit',
    figures: ['requested', 'cap'],
  },
  per_tx_cap: {
    check: 'limits',
    meaning: "the transaction's spend (fee included) is above the key's `per_tx_lamports`",
    action: 'spend less in one transaction',
    figures: ['requested', 'cap'],
  },
  per_day_cap: {
    check: 'limits',
    meaning: "the key's daily lamport cap is used up, or this spend would pass it (`requested`, when known)",
    action: 'wait, or spend less: `key_show` shows `remaining_daily_lamports`',
    figures: ['spent', 'requested', 'cap'],
  },
  credential_budget: {
    check: 'limits',
    meaning:
      'this spend would pass the daily budget of a block of the credential presented (`per_day_lamports`: its signs on every key together)',
    action: "wait, or spend less: `key_show` shows each block's budget and what is left of it; or ask its giver",
    figures: ['block', 'revocation_id', 'spent', 'requested', 'cap'],
  },
  credential_usd_budget: {
    check: 'limits',
    meaning:
      'this spend would pass the daily dollar budget of a block of the credential presented (`per_day_usd_micros`: its signs on every key together, at the value each recorded)',
    action: "wait, or spend less: `key_show` shows each block's budget and what is left of it; or ask its giver",
    figures: ['block', 'revocation_id', 'usd_spent', 'usd_requested', 'usd_cap'],
  },
  usd_per_tx_cap: {
    check: 'limits',
    meaning: "the transaction's value in dollars is above the key's `usd.per_tx`",
    action: 'spend less in one transaction',
    figures: ['usd_requested', 'usd_cap'],
  },
  usd_per_day_cap: {
    check: 'limits',
    meaning: "this spend would pass the key's `usd.per_day`",
    action: 'wait, or spend less',
    figures: ['usd_spent', 'usd_requested', 'usd_cap'],
  },
  spend_unknown: {
    check: 'limits',
    meaning: "the simulation did not give the key's balance change, so the spend cannot be bounded",
    action: 'try again',
    figures: [],
  },
  treasury_delegate_revoked: {
    check: 'tokens',
    meaning:
      'a treasury account of the key no longer names the key as its delegate (the owner revoked or changed it), or is gone',
    action: 'ask the operator to have the treasury owner approve the planned allowance again (`treasury plan`)',
    figures: ['account'],
  },
  per_destination_cap: {
    check: 'limits',
    meaning: 'one account would receive more lamports from the key than its `per_destination_per_day_lamports` in 24 h',
    action: 'pay that account less today, or ask the operator',
    figures: ['destination', 'received', 'requested', 'cap'],
  },
  token_per_tx_cap: {
    check: 'limits',
    meaning: 'the transaction spends more of a mint than its `per_tx`',
    action: 'spend less of the mint in one transaction',
    figures: ['mint', 'requested', 'cap'],
  },
  token_per_day_cap: {
    check: 'limits',
    meaning: 'this spend of a mint would pass its `per_day`',
    action: 'wait, or spend less: `key_show` shows `remaining_daily` per mint',
    figures: ['mint', 'spent', 'requested', 'cap'],
  },
  token_per_destination_cap: {
    check: 'limits',
    meaning: 'one owner would receive more of a mint than `per_destination_per_day` in 24 h',
    action: 'wait, or pay that owner less',
    figures: ['mint', 'destination', 'received', 'requested', 'cap'],
  },
  message_is_transaction: {
    check: 'message',
    meaning: "a message payload's bytes decode as a transaction",
    action: 'sign transactions as transaction payloads; sign only real messages as messages',
    figures: [],
  },
  offchain_message_invalid: {
    check: 'message',
    meaning: "an off-chain message breaks its format's rules (named in `detail`)",
    action: 'build the message again with a library that follows the format',
    figures: [],
  },
  not_a_signatory: {
    check: 'message',
    meaning: "the key is not among the off-chain message's required signatories",
    action: 'list the key among the signatories',
    figures: [],
  },
  simulation_failed: {
    check: null,
    meaning: 'not a refusal: the program would reject the transaction (outcome `simulation_failed`)',
    action: 'fix the cause `program_error` and `logs` name, build again',
    figures: [],
  },
} as const satisfies Record<string, ReasonSpec>;

export type Reason = keyof typeof REASONS;
export const REASON_NAMES = Object.keys(REASONS) as Reason[];

/** One check's refusal: the check and reason (from REASONS), the English message, and its figures. */
export interface Refusal {
  check: CheckName;
  reason: Reason;
  message: string;
  figures?: RefusalFigures;
}

/** The reasons that refuse (all but simulation_failed), for the builders below. */
type RefusalReason = { [R in Reason]: (typeof REASONS)[R]['check'] extends null ? never : R }[Reason];
/** The figures a reason declares. */
export type FiguresOf<R extends Reason> = Pick<RefusalFigures, (typeof REASONS)[R]['figures'][number]>;

/** A refusal for `reason`, its check taken from the table so the two never disagree. */
export function refusal<R extends RefusalReason>(reason: R, message: string, figures?: FiguresOf<R>): Refusal {
  const check = REASONS[reason].check;
  return figures === undefined ? { check, reason, message } : { check, reason, message, figures };
}
