/**
 * SEP-2243 on the server side, as pure functions: the standard headers (MCP-Protocol-Version, Mcp-Method,
 * Mcp-Name) and the `Mcp-Param-{Name}` headers of `x-mcp-header` tool arguments, validated against the body;
 * and the start-up check of every tool definition's `x-mcp-header` annotations (tools.mdx §x-mcp-header).
 * Each check returns null or a message for a -32020 HeaderMismatch.
 */
import { decodeHeaderValue, hasOnlyHeaderSafeChars } from './base64';

/** The `mcp-*` request headers by lowercase name, from Node's rawHeaders (so a repeated header is seen). */
export interface McpHeaders {
  values: Map<string, string>;
  /** Name of an `mcp-*` header sent more than once, if any: ambiguous, so refused. */
  duplicate: string | null;
}

function isMcpName(name: string): boolean {
  return (
    name.length > 4 &&
    (name.charCodeAt(0) | 0x20) === 0x6d && // m
    (name.charCodeAt(1) | 0x20) === 0x63 && // c
    (name.charCodeAt(2) | 0x20) === 0x70 && // p
    name.charCodeAt(3) === 0x2d // -
  );
}

export function collectMcpHeaders(rawHeaders: readonly string[]): McpHeaders {
  const values = new Map<string, string>();
  let duplicate: string | null = null;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i];
    const value = rawHeaders[i + 1];
    if (name === undefined || value === undefined || !isMcpName(name)) continue;
    const lower = name.toLowerCase();
    if (values.has(lower)) duplicate ??= name;
    // Node's parser has already stripped HTTP optional whitespace around the raw value.
    values.set(lower, value);
  }
  return { values, duplicate };
}

export const H_PROTOCOL_VERSION = 'mcp-protocol-version';
export const H_METHOD = 'mcp-method';
export const H_NAME = 'mcp-name';
export const H_PARAM_PREFIX = 'mcp-param-';

/** Methods whose `Mcp-Name` mirrors `params.name` or `params.uri`. */
export const NAME_SOURCE: Readonly<Record<string, 'name' | 'uri'>> = {
  'tools/call': 'name',
  'resources/read': 'uri',
  'prompts/get': 'name',
};

/** Standard headers against the body; `nameValue` is params.name/params.uri for methods that need Mcp-Name. */
export function checkStandardHeaders(
  h: McpHeaders,
  body: { method: string; protocolVersion: string; nameValue: string | null },
): string | null {
  if (h.duplicate !== null) return `Header mismatch: ${h.duplicate} was sent more than once`;
  const version = h.values.get(H_PROTOCOL_VERSION);
  if (version === undefined) return 'Header mismatch: MCP-Protocol-Version header is required';
  if (!hasOnlyHeaderSafeChars(version))
    return 'Header mismatch: MCP-Protocol-Version header contains invalid characters';
  const method = h.values.get(H_METHOD);
  if (method === undefined) return 'Header mismatch: Mcp-Method header is required';
  if (!hasOnlyHeaderSafeChars(method)) return 'Header mismatch: Mcp-Method header contains invalid characters';
  if (method !== body.method)
    return `Header mismatch: Mcp-Method header value ${quote(method)} does not match body value ${quote(body.method)}`;
  if (body.nameValue !== null) {
    const raw = h.values.get(H_NAME);
    if (raw === undefined) return `Header mismatch: Mcp-Name header is required for ${body.method}`;
    if (!hasOnlyHeaderSafeChars(raw)) return 'Header mismatch: Mcp-Name header contains invalid characters';
    const decoded = decodeHeaderValue(raw);
    if (!decoded.ok) return 'Header mismatch: Mcp-Name header is not valid =?base64?…?= (strict base64 of UTF-8)';
    if (decoded.value !== body.nameValue)
      return `Header mismatch: Mcp-Name header value ${quote(decoded.value)} does not match body value ${quote(body.nameValue)}`;
  }
  if (version !== body.protocolVersion) {
    return `Header mismatch: MCP-Protocol-Version header value ${quote(version)} does not match body value ${quote(body.protocolVersion)}`;
  }
  return null;
}

function quote(s: string): string {
  const short = s.length > 80 ? `${s.slice(0, 80)}…` : s;
  return JSON.stringify(short);
}

// ---------------------------------------------------------------------------------------------------------------
// x-mcp-header annotations

/** One annotated argument: its header name, where it sits in `arguments`, and its JSON type. */
export interface ParamAnnotation {
  header: string; // the {Name} of Mcp-Param-{Name}, as declared
  headerLower: string; // `mcp-param-<name>` lowercased, for lookup
  path: readonly string[];
  /** `arguments.<path>`, for messages. */
  field: string;
  type: 'string' | 'integer' | 'boolean';
}

const TCHAR_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/**
 * Every `x-mcp-header` in a tool's inputSchema, checked against the constraints of tools.mdx: a non-empty RFC 9110
 * token, unique ignoring case, only on a property with a single `type` of integer, string or boolean (never number;
 * an integer bounded to the safe range), reached from the root through `properties` steps only. Throws naming the
 * tool and the rule broken, so a bad definition stops the service at start instead of vanishing from clients.
 */
export function collectParamAnnotations(toolName: string, inputSchema: unknown): ParamAnnotation[] {
  const found: ParamAnnotation[] = [];
  const problems: string[] = [];

  const walk = (node: unknown, path: string[], pure: boolean): void => {
    if (Array.isArray(node)) {
      for (const item of node) walk(item, path, false);
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    const obj = node as Record<string, unknown>;
    if (Object.prototype.hasOwnProperty.call(obj, 'x-mcp-header')) {
      const where = path.length ? `arguments.${path.join('.')}` : 'the schema root';
      const name = obj['x-mcp-header'];
      if (!pure || path.length === 0) problems.push(`x-mcp-header at ${where} is not reached through properties alone`);
      else if (typeof name !== 'string' || name.length === 0)
        problems.push(`x-mcp-header at ${where} is empty or not a string`);
      else if (!TCHAR_TOKEN.test(name))
        problems.push(`x-mcp-header ${JSON.stringify(name)} at ${where} is not an RFC 9110 token`);
      else {
        const type = obj.type;
        if (type !== 'string' && type !== 'integer' && type !== 'boolean') {
          problems.push(
            `x-mcp-header ${JSON.stringify(name)} at ${where} is on type ${JSON.stringify(type)}; only a single integer, string or boolean type is allowed`,
          );
        } else if (
          type === 'integer' &&
          !(
            typeof obj.minimum === 'number' &&
            obj.minimum >= -MAX_SAFE &&
            typeof obj.maximum === 'number' &&
            obj.maximum <= MAX_SAFE
          )
        ) {
          problems.push(
            `x-mcp-header ${JSON.stringify(name)} at ${where} is an integer without minimum/maximum inside the safe range`,
          );
        } else if (found.some((f) => f.header.toLowerCase() === name.toLowerCase())) {
          problems.push(`x-mcp-header ${JSON.stringify(name)} is used twice (names are compared ignoring case)`);
        } else {
          found.push({
            header: name,
            headerLower: `${H_PARAM_PREFIX}${name.toLowerCase()}`,
            path: [...path],
            field: `arguments.${path.join('.')}`,
            type,
          });
        }
      }
    }
    for (const [key, value] of Object.entries(obj)) {
      if (key === 'x-mcp-header') continue;
      if (key === 'properties' && typeof value === 'object' && value !== null && !Array.isArray(value)) {
        for (const [prop, sub] of Object.entries(value as Record<string, unknown>)) walk(sub, [...path, prop], pure);
      } else {
        walk(value, path, false);
      }
    }
  };

  walk(inputSchema, [], true);
  if (problems.length > 0) throw new Error(`tool ${JSON.stringify(toolName)}: ${problems.join('; ')}`);
  return found;
}

function valueAt(args: unknown, path: readonly string[]): unknown {
  let cur: unknown = args;
  for (const step of path) {
    if (typeof cur !== 'object' || cur === null || Array.isArray(cur)) return undefined;
    cur = (cur as Record<string, unknown>)[step];
  }
  return cur;
}

const INTEGER_TEXT = /^-?\d+(?:\.0+)?$/;

/** Does a decoded header value stand for the body value? Strings exactly; integers numerically; booleans as true/false. */
export function headerMatchesValue(decoded: string, value: unknown): boolean {
  if (typeof value === 'string') return decoded === value;
  if (typeof value === 'boolean') return decoded === (value ? 'true' : 'false');
  if (typeof value === 'number' && Number.isSafeInteger(value)) {
    if (!INTEGER_TEXT.test(decoded)) return false;
    const n = Number(decoded);
    return Number.isSafeInteger(n) && n === value;
  }
  return false; // objects, arrays, fractions cannot be mirrored into a header
}

/**
 * `Mcp-Param-*` headers against `arguments` for a tool's annotations: a non-null value needs its header with an
 * equal value; a null or absent value must come without one.
 */
export function checkParamHeaders(
  h: McpHeaders,
  annotations: readonly ParamAnnotation[],
  args: unknown,
): string | null {
  for (const a of annotations) {
    const raw = h.values.get(a.headerLower);
    const value = valueAt(args, a.path);
    const field = a.field;
    if (value === undefined || value === null) {
      if (raw !== undefined)
        return `Header mismatch: Mcp-Param-${a.header} header was sent but ${field} is ${value === null ? 'null' : 'absent'}`;
      continue;
    }
    if (raw === undefined) return `Header mismatch: Mcp-Param-${a.header} header is required because ${field} is set`;
    if (!hasOnlyHeaderSafeChars(raw))
      return `Header mismatch: Mcp-Param-${a.header} header contains invalid characters`;
    const decoded = decodeHeaderValue(raw);
    if (!decoded.ok)
      return `Header mismatch: Mcp-Param-${a.header} header is not valid =?base64?…?= (strict base64 of UTF-8)`;
    if (!headerMatchesValue(decoded.value, value))
      return `Header mismatch: Mcp-Param-${a.header} header value ${quote(decoded.value)} does not match ${field}`;
  }
  return null;
}
