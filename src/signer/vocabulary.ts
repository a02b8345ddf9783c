/**
 * The report's vocabulary, each list written once: the types, the tools' output schema (src/mcp/report-schema.ts), the
 * `checks` resource and the docs are derived from or tested against these lists.
 * `signed` (sign_only) is not final: the signer watches the signature and records its end in the ledger.
 */
export const OUTCOMES = ['ok', 'refused', 'simulation_failed', 'confirmed', 'failed', 'unknown', 'signed'] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** The checks a refusal can name in `failed_check`. */
export const CHECK_NAMES = [
  'authorized',
  'halted',
  'chain',
  'fee_payer',
  'programs',
  'tokens',
  'system',
  'vault',
  'signers',
  'lookup_tables',
  'new_accounts',
  'ata_owners',
  'destinations',
  'price',
  'limits',
  'approval',
  'message',
] as const;
export type CheckName = (typeof CHECK_NAMES)[number];

/** Names that can appear in `checks` (passed), in addition to the failing-check names. */
export const PASS_NAMES = [...CHECK_NAMES, 'simulation', 'cap'] as const;
export type PassName = (typeof PASS_NAMES)[number];
