/**
 * Address lookup tables kept between signs, so a v0 transaction whose tables were read before costs no round trip
 * to resolve. Why a kept table cannot make the signer judge other accounts than the chain runs:
 *
 * - A table only grows: the lookup-table program appends addresses (extend), never rewrites one, and a closed
 *   table's address cannot be created again (it is derived from a recent slot, and closing takes longer than a
 *   slot stays recent). So an index a kept table holds names, on the chain, the same address it names here.
 * - A message that uses an index past the kept table's end reads the table again; so does a table not kept yet.
 * - A table deactivated or closed since it was read makes the simulation fail (the runtime cannot load its
 *   accounts), and a failed simulation is never signed; a kept table older than `MAX_AGE_MS` is read again, so a
 *   deactivation is also refused by name within that time.
 * - What is judged is the simulation, which the node runs with the tables' content in its own bank.
 *
 * A transaction prepared again (after an operator's approval, or on a new blockhash) reads its tables afresh.
 */
import type { RpcClient } from '../../rpc/types';
import { decodeLookupTable, type LookupTable, type TableResult } from '../wire/lookup-tables';

/** A kept table older than this is read again. */
export const MAX_AGE_MS = 60_000;

export class LookupTableCache {
  private readonly tables = new Map<string, { table: LookupTable; at: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** The kept table when it is young enough and holds index `highest` (-1: uses none). */
  kept(address: string, highest: number): LookupTable | null {
    const entry = this.tables.get(address);
    if (entry === undefined || this.now() - entry.at >= MAX_AGE_MS) return null;
    return highest < entry.table.addresses.length ? entry.table : null;
  }

  /** Reads `addresses` in one call, keeps every one that decodes, and returns each decoded (or why not). */
  async read(chain: RpcClient, addresses: readonly string[]): Promise<Map<string, TableResult>> {
    const at = this.now();
    const read = await chain.getAccountsData([...addresses]);
    const results = new Map<string, TableResult>();
    for (const [i, address] of addresses.entries()) {
      const decoded = decodeLookupTable(address, read.accounts[i] ?? null);
      if (decoded.ok) this.tables.set(address, { table: decoded.table, at });
      else this.tables.delete(address);
      results.set(address, decoded);
    }
    return results;
  }
}

const byClient = new WeakMap<RpcClient, LookupTableCache>();

/** The tables kept for a chain client's cluster: one cache per client. */
export function lookupTableCacheOf(chain: RpcClient): LookupTableCache {
  let cache = byClient.get(chain);
  if (cache === undefined) {
    cache = new LookupTableCache();
    byClient.set(chain, cache);
  }
  return cache;
}
