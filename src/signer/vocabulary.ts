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
  'cluster',
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

/**
 * Check names renamed, by their old spelling: still accepted where a check name is input (a `policy test` case's
 * `failed_check`), never written. CHANGELOG.md lists each.
 */
export const RENAMED_CHECKS: Readonly<Record<string, CheckName>> = { chain: 'cluster' };

/** A check name as input: its current spelling for an old one, anything else as given. */
export function checkNameFromInput(name: string): string {
  return RENAMED_CHECKS[name] ?? name;
}

/** Names that can appear in `checks` (passed), in addition to the failing-check names. */
export const PASS_NAMES = [...CHECK_NAMES, 'simulation', 'cap'] as const;
export type PassName = (typeof PASS_NAMES)[number];
