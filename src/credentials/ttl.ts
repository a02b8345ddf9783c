/** A credential's lifetime as the CLI takes it (`90s`, `30m`, `1h`, `7d`) and the instant it ends. */
import { SignerError } from '../util/errors';

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

export function expiryAfter(ttl: string, now: Date): Date {
  const m = /^([1-9]\d{0,6})([smhd])$/.exec(ttl);
  if (!m)
    throw new SignerError(
      'request_invalid',
      `--ttl takes a duration such as 90s, 30m, 1h or 7d, not ${JSON.stringify(ttl)}`,
    );
  return new Date(now.getTime() + Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS]);
}
