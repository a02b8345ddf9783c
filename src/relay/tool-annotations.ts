/**
 * What the relay knows about the service's `x-mcp-header` annotations, learned from the service's own
 * `tools/list` and nothing else: no tool of ours is named here. A tool whose annotations break the SEP-2243
 * constraints is invalid; a Streamable HTTP client "MUST exclude the invalid tool from the result of
 * tools/list", so `filterToolsList` drops it (with a warning on stderr) from lists the relay passes on.
 */
import { collectParamAnnotations, type ParamAnnotation } from '../mcp/headers';
import { isRecord } from '../util/is-record';

export type AnnotationMap = Map<string, readonly ParamAnnotation[]>;

export interface ToolsPage {
  tools: { name: string; inputSchema?: unknown }[];
  nextCursor: string | undefined;
}

/** A `tools/list` result's tools and cursor, or null when the result is not shaped like one. */
export function readToolsPage(result: unknown): ToolsPage | null {
  if (!isRecord(result) || !Array.isArray(result.tools)) return null;
  const tools: ToolsPage['tools'] = [];
  for (const t of result.tools) {
    if (isRecord(t) && typeof t.name === 'string') tools.push({ name: t.name, inputSchema: t.inputSchema });
  }
  return { tools, nextCursor: typeof result.nextCursor === 'string' ? result.nextCursor : undefined };
}

/** Annotations of one tool, or the reason its definition is invalid. */
export function annotationsOf(tool: {
  name: string;
  inputSchema?: unknown;
}): { ok: true; annotations: ParamAnnotation[] } | { ok: false; reason: string } {
  try {
    return { ok: true, annotations: collectParamAnnotations(tool.name, tool.inputSchema) };
  } catch (e) {
    return { ok: false, reason: e instanceof Error ? e.message : String(e) };
  }
}

/** Adds every valid tool of a page to `into`; returns the invalid ones with their reasons. */
export function learnPage(page: ToolsPage, into: AnnotationMap): { name: string; reason: string }[] {
  const invalid: { name: string; reason: string }[] = [];
  for (const tool of page.tools) {
    const a = annotationsOf(tool);
    if (a.ok) into.set(tool.name, a.annotations);
    else {
      into.delete(tool.name);
      invalid.push({ name: tool.name, reason: a.reason });
    }
  }
  return invalid;
}

/**
 * The same `tools/list` result without tools whose `x-mcp-header` annotations are invalid, or the very same
 * object when every tool is valid (the common case: nothing is copied).
 */
export function filterToolsList(result: unknown, invalid: readonly { name: string }[]): unknown {
  if (invalid.length === 0 || !isRecord(result) || !Array.isArray(result.tools)) return result;
  const drop = new Set(invalid.map((t) => t.name));
  return {
    ...result,
    tools: result.tools.filter((t) => !(isRecord(t) && typeof t.name === 'string' && drop.has(t.name))),
  };
}
