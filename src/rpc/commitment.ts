/**
 * The commitment a cluster's reads and confirmations use: `confirmed` (a supermajority voted on the block, the
 * default) or `finalized` (rooted, about 13 s later on mainnet-like clusters, and never rolled back).
 */
import type { Commitment, SignatureStatus } from './types';

export const COMMITMENTS: readonly Commitment[] = ['confirmed', 'finalized'];

export function isCommitment(v: unknown): v is Commitment {
  return v === 'confirmed' || v === 'finalized';
}

/** Whether a signature status has reached `commitment`: finalized satisfies confirmed, processed satisfies neither. */
export function meetsCommitment(status: SignatureStatus['confirmationStatus'], commitment: Commitment): boolean {
  if (status === 'finalized') return true;
  return status === 'confirmed' && commitment === 'confirmed';
}
