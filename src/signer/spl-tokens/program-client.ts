/**
 * The SPL Token program client (@solana-program/token), loaded the first time a token account, mint or token
 * instruction is read. It requires the whole of @solana/kit, which a service that only moves SOL would otherwise
 * hold in memory for nothing (docs/performance.md, "Memory").
 */
type TokenClient = typeof import('@solana-program/token');

let client: TokenClient | undefined;

export function tokenClient(): TokenClient {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use (see above)
  client ??= require('@solana-program/token') as TokenClient;
  return client;
}
