/** Program ids and instruction tags the checks know by heart (docs/policy.md lists what each check allows). */
export const SYSTEM_PROGRAM = '11111111111111111111111111111111';
export const COMPUTE_BUDGET_PROGRAM = 'ComputeBudget111111111111111111111111111111';
export const ASSOCIATED_TOKEN_PROGRAM = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL';
export const SPL_TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
export const TOKEN_2022_PROGRAM = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';
export const TOKEN_PROGRAMS: ReadonlySet<string> = new Set([SPL_TOKEN_PROGRAM, TOKEN_2022_PROGRAM]);
export const MEMO_PROGRAM = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr';
export const MEMO_V1_PROGRAM = 'Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo';
/** Programs every key may call: the token programs (the token policy judges them) and two that move no value. */
export const ALWAYS_ALLOWED_PROGRAMS: readonly string[] = [
  SPL_TOKEN_PROGRAM,
  TOKEN_2022_PROGRAM,
  COMPUTE_BUDGET_PROGRAM,
  MEMO_PROGRAM,
  MEMO_V1_PROGRAM,
];

/**
 * The signature-verification precompiles. The runtime charges the base fee for every signature their instructions
 * verify (the count is the instruction data's first byte), as for the transaction's own signatures.
 */
export const ED25519_PROGRAM = 'Ed25519SigVerify111111111111111111111111111';
export const SECP256K1_PROGRAM = 'KeccakSecp256k11111111111111111111111111111';
export const SECP256R1_PROGRAM = 'Secp256r1SigVerify1111111111111111111111111';
export const PRECOMPILE_PROGRAMS: ReadonlySet<string> = new Set([
  ED25519_PROGRAM,
  SECP256K1_PROGRAM,
  SECP256R1_PROGRAM,
]);

export const SYSTEM_TRANSFER_TAG = 2;
/** Anchor discriminator of Player Profile's drain_sol_vault: sha256("global:drain_sol_vault")[0..8]. */
export const DRAIN_SOL_VAULT_DISCRIMINATOR = Uint8Array.from([30, 107, 197, 95, 79, 153, 194, 32]);
