/**
 * Bearer tokens: `sfs_` + base58 of 32 random bytes. Only their sha256 is configured; a presented token is
 * hashed and compared against every configured hash in constant time, with no early exit across tokens.
 */
import crypto from 'node:crypto';
import type { TokenConfig } from '../config/types';
import { encodeBase58 } from '../util/base58';

export function newToken(): string {
  return `sfs_${encodeBase58(crypto.randomBytes(32))}`;
}

export function tokenSha256(token: string): string {
  return crypto.createHash('sha256').update(token, 'utf8').digest('hex');
}

export class TokenVerifier {
  private readonly tokens: () => readonly TokenConfig[];
  private source: readonly TokenConfig[] | null = null;
  private hashes: { token: TokenConfig; digest: Buffer }[] = [];

  /** The tokens, or where to read them on each request (a reload may replace them). */
  constructor(tokens: readonly TokenConfig[] | (() => readonly TokenConfig[])) {
    this.tokens = typeof tokens === 'function' ? tokens : () => tokens;
  }

  /** The token whose hash matches the `Authorization: Bearer …` value, or null. */
  verifyAuthorization(header: string | undefined): TokenConfig | null {
    if (!header || !header.startsWith('Bearer ')) return null;
    const presented = header.slice('Bearer '.length);
    if (presented.length === 0) return null;
    const digest = crypto.createHash('sha256').update(presented, 'utf8').digest();
    let found: TokenConfig | null = null;
    for (const entry of this.current()) {
      if (entry.digest.length === digest.length && crypto.timingSafeEqual(entry.digest, digest) && found === null)
        found = entry.token;
    }
    return found;
  }

  /** The configured digests, decoded again only when the list itself was replaced. */
  private current(): { token: TokenConfig; digest: Buffer }[] {
    const tokens = this.tokens();
    if (tokens !== this.source) {
      this.source = tokens;
      this.hashes = tokens.map((token) => ({ token, digest: Buffer.from(token.sha256, 'hex') }));
    }
    return this.hashes;
  }
}
