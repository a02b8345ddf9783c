/**
 * What the middleware learns about a request, kept on Express's `res.locals` (typed here): the token that proved
 * itself, and what the MCP endpoint did, for the access log and the metrics.
 */
import type { TokenConfig } from '../config/types';
import type { ToolSummary } from '../mcp/service';
import type { SignProgress } from '../signer/types';

export interface McpOutcome {
  /** The JSON-RPC method when the body named one. */
  method: string | null;
  /** A successful read that changes nothing (the access log writes it at `debug`). */
  read: boolean;
  tool: ToolSummary | null;
}

declare module 'express-serve-static-core' {
  interface Locals {
    token?: TokenConfig;
    mcp?: McpOutcome;
    /** The in-flight cap's ear on a sign's progress: a sign waiting for a person gives its place back. */
    signProgress?: (p: SignProgress) => void;
  }
}
