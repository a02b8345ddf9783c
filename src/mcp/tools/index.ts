/**
 * The four tools, always in the order check, sign, key_show, halt (docs/mcp.md), one file each. Their
 * definitions are plain JSON Schema 2020-12 literals, built once at start: nothing is converted per request. Each
 * description tells the agent what a refusal means and what to do next, because the description is all a model
 * reads before calling.
 */
import { checkTool } from './check';
import { haltTool } from './halt';
import { keyShowTool } from './key-show';
import { signTool } from './sign';
import type { Tool, ToolDef, ToolName } from './tool';

export type { Tool, ToolCall, ToolDef, ToolName, ToolResult } from './tool';

/** By name, in the order they are listed. */
export const TOOLS: Readonly<Record<ToolName, Tool>> = {
  check: checkTool,
  sign: signTool,
  key_show: keyShowTool,
  halt: haltTool,
};

/** The tool list as `tools/list` serves it; `paramHeaders` adds SEP-2243 `x-mcp-header: "Key"` to every `key`. */
export function toolDefinitions(paramHeaders: boolean): ToolDef[] {
  return Object.values(TOOLS).map((t) => t.definition(paramHeaders));
}
