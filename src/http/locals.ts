/**
 * What the middleware learns about a request, kept on Express's `res.locals` (typed here): the token (or
 * credential) that proved itself, and what the MCP endpoint did, for the access log and the metrics.
 */
import type { VerifiedCredential } from '../credentials/verifier';
import type { ToolSummary } from '../mcp/service';
import type { PresentedCredential, SignProgress } from '../signer/types';

export interface McpOutcome {
  /** The JSON-RPC method when the body named one. */
  method: string | null;
  /** A successful read that changes nothing (the access log writes it at `debug`). */
  read: boolean;
  tool: ToolSummary | null;
}

/** Who proved themselves: a bearer token's name, or a credential's root name, and the keys either may use. */
export interface BearerIdentity {
  name: string;
  keys: readonly string[];
}

declare module 'express-serve-static-core' {
  interface Locals {
    token?: BearerIdentity;
    /** Set with `token` when the bearer was a credential: its checks are judged once the body has arrived. */
    credential?: VerifiedCredential;
    /** The credential as the engine sees it: its chain, and its spend checks to judge on a simulation's figures. */
    presented?: PresentedCredential;
    mcp?: McpOutcome;
    /** The in-flight cap's ear on a sign's progress: a sign waiting for a person gives its place back. */
    signProgress?: (p: SignProgress) => void;
  }
}
