/** Funding payloads (`key fund`): an unsigned System Transfer in payload v1 form, and exact ZINK amounts. */
import { SignerError } from '../util/errors';
import { SYSTEM_PROGRAM, SYSTEM_TRANSFER_TAG } from '../solana/programs';

const U64_MAX = 18_446_744_073_709_551_615n;

/** Exact decimal with at most 9 decimals, above 0, within u64 lamports. Returns lamports. */
export function parseZinkAmount(text: string): bigint {
  const m = /^(\d*)(?:\.(\d{0,9}))?$/.exec(text);
  const whole = m?.[1] ?? '';
  const frac = m?.[2] ?? '';
  if (!m || (whole === '' && frac === '')) {
    throw new SignerError(
      'request_invalid',
      `amount ${JSON.stringify(text)}: write a decimal number of ZINK with at most 9 decimals, like 0.05`,
    );
  }
  const lamports = BigInt(whole || '0') * 1_000_000_000n + BigInt(frac.padEnd(9, '0'));
  if (lamports === 0n) throw new SignerError('request_invalid', `amount ${JSON.stringify(text)}: must be above 0`);
  if (lamports > U64_MAX) throw new SignerError('request_invalid', `amount ${JSON.stringify(text)}: too large`);
  return lamports;
}

export function transferPayload(opts: {
  from: string;
  to: string;
  lamports: number | bigint;
  summary: string;
}): Record<string, unknown> {
  const data = Buffer.alloc(12);
  data.writeUInt32LE(SYSTEM_TRANSFER_TAG, 0);
  data.writeBigUInt64LE(BigInt(opts.lamports), 4);
  return {
    version: 1,
    summary: opts.summary,
    warnings: [],
    transaction: {
      fee_payer: opts.from,
      signers: [opts.from],
      instructions: [
        {
          program_id: SYSTEM_PROGRAM,
          accounts: [
            { pubkey: opts.from, is_signer: true, is_writable: true },
            { pubkey: opts.to, is_signer: false, is_writable: true },
          ],
          data: [...data],
        },
      ],
    },
    partial_signers: [],
  };
}
