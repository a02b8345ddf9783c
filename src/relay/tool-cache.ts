/**
 * The `x-mcp-header` annotations of the service's tools, cached for the relay's lifetime. Learned from a full
 * `tools/list` fetched with the caller's own token when a `tools/call` needs them, and from every complete
 * `tools/list` the client itself asks for (so the common list-then-call costs no extra round trip). A `-32020`
 * on a call refreshes them once (streamable-http.mdx: the client SHOULD re-list, then retry).
 */
import type { ParamAnnotation } from '../mcp/headers';
import { filterToolsList, learnPage, readToolsPage, type AnnotationMap } from './tool-annotations';

/** Fetches one page of the service's tools/list and answers its `result`. */
export type FetchToolsPage = (protocolVersion: string, cursor: string | undefined) => Promise<unknown>;

const MAX_PAGES = 100;

export class ToolHeaderCache {
  private map: AnnotationMap = new Map();
  private complete = false;
  private loading: Promise<void> | null = null;
  private readonly warned = new Set<string>();

  constructor(
    private readonly fetchPage: FetchToolsPage,
    private readonly log: (line: string) => void,
  ) {}

  /** The annotations of a tool, loading the list first when the tool is not known yet. */
  async forTool(name: string, protocolVersion: string): Promise<readonly ParamAnnotation[] | undefined> {
    if (!this.map.has(name) && !this.complete) await this.load(protocolVersion);
    return this.map.get(name);
  }

  /** Forget what is known and fetch the list again (after a -32020). */
  async refresh(protocolVersion: string): Promise<void> {
    this.complete = false;
    await this.load(protocolVersion);
  }

  current(name: string): readonly ParamAnnotation[] | undefined {
    return this.map.get(name);
  }

  /**
   * Learns from a tools/list result passed to the client, and answers the result to pass on: without tools whose
   * annotations are invalid. A first page with no further cursor is the whole list, so it replaces the cache.
   */
  observe(requestParams: unknown, result: unknown): unknown {
    const page = readToolsPage(result);
    if (!page) return result;
    const hasCursor =
      typeof requestParams === 'object' &&
      requestParams !== null &&
      typeof (requestParams as { cursor?: unknown }).cursor === 'string';
    const whole = !hasCursor && page.nextCursor === undefined;
    const into: AnnotationMap = whole ? new Map<string, readonly ParamAnnotation[]>() : this.map;
    const invalid = learnPage(page, into);
    if (whole) {
      this.map = into;
      this.complete = true;
    }
    this.warn(invalid);
    return filterToolsList(result, invalid);
  }

  private warn(invalid: readonly { name: string; reason: string }[]): void {
    for (const t of invalid) {
      const key = `${t.name}\n${t.reason}`;
      if (this.warned.has(key)) continue;
      this.warned.add(key);
      this.log(
        `warning: the service's tool ${JSON.stringify(t.name)} is left out of tools/list: invalid x-mcp-header (${t.reason})`,
      );
    }
  }

  private load(protocolVersion: string): Promise<void> {
    if (this.loading) return this.loading;
    this.loading = (async () => {
      const map: AnnotationMap = new Map();
      let cursor: string | undefined;
      for (let page = 0; page < MAX_PAGES; page++) {
        const parsed = readToolsPage(await this.fetchPage(protocolVersion, cursor));
        if (!parsed) throw new Error('the tools/list result has no tools array');
        this.warn(learnPage(parsed, map));
        cursor = parsed.nextCursor;
        if (cursor === undefined) break;
      }
      this.map = map;
      this.complete = true;
    })()
      .catch((e: unknown) => {
        this.log(
          `warning: could not read the service's tools/list (${e instanceof Error ? e.message : String(e)}); calling without Mcp-Param headers`,
        );
      })
      .finally(() => {
        this.loading = null;
      });
    return this.loading;
  }
}
