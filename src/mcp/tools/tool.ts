/**
 * A tool as the MCP SDK registers one: its definition (what `tools/list` serves) and its handler together. The
 * handler runs the engine and says what the result is; the service (service.ts) wraps it in the protocol's reply
 * and turns an error into a result the model can read.
 */
import type { Principal, SignerEngine, SignProgress } from '../../signer/types';

export type Json = Record<string, unknown>;

export type ToolName = 'check' | 'sign' | 'key_show' | 'halt';

export interface ToolDef {
  name: ToolName;
  title: string;
  description: string;
  inputSchema: Json;
  outputSchema: Json;
  annotations: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };
}

/** A call's arguments, already checked against the tool's inputSchema. */
export interface ToolCall {
  engine: SignerEngine;
  args: Record<string, unknown>;
  key: string | null;
  principal: Principal;
  /** Made on demand: aborted when the client goes away. */
  signal?: () => AbortSignal;
  /** Told of a sign's progress (waiting for the lock, an approval, confirmation). */
  onProgress?: (p: SignProgress) => void;
}

/** What a call produced: the structured result and how the access log, the metrics and isError see it. */
export interface ToolResult {
  structured: object;
  outcome: string;
  failedCheck: string | null;
  /** The key the engine chose, when it says; else the one named. */
  key: string | null;
  signature: string | null;
  isError: boolean;
  /** A read that changes nothing: logged at debug. */
  read: boolean;
}

export interface Tool {
  definition(paramHeaders: boolean): ToolDef;
  run(call: ToolCall): Promise<ToolResult>;
}
