/**
 * How a tool error reaches the agent: `isError`, the text `error: <message>`, and `structuredContent.error` with the
 * code (src/util/errors/codes.ts), the message and the context's fields other than `detail` (the message already says it),
 * so a program branches on the code and never on the English.
 */
import type { ErrorCode } from '../../util/errors/codes';
import type { SignerError } from '../../util/errors/signer-error';

export interface ToolErrorContent {
  error: { code: ErrorCode; message: string; context: Readonly<Record<string, string>> };
}

export function toolErrorContent(e: SignerError): ToolErrorContent {
  const context = Object.fromEntries(Object.entries(e.context).filter(([field]) => field !== 'detail'));
  return { error: { code: e.code, message: e.message, context } };
}

/** The text block beside it: what agents have always read. */
export function toolErrorText(e: SignerError): string {
  return `error: ${e.message}`;
}
