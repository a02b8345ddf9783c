/**
 * The MCP endpoint, free of HTTP framework: a parsed body and the headers in, a status and the reply's JSON bytes
 * out. It runs the checks in the transport's order — one JSON message → `initialize` → `_meta` → headers against the
 * body → version — then the method table. Every static answer (discover, the lists, each resource) is serialised
 * and encoded to UTF-8 once at construction: they never change while the process runs, and a reply only wraps the
 * bytes in the request's envelope.
 */
import type { SignerEngine, Principal, SignProgress } from '../signer/types';
import { isSignerError, errorMessage, SignerError } from '../util/errors';
import { isRecord } from '../util/is-record';
import { errorReply, readMessage, resultReply, resultReplyBytes, type RequestId } from './envelope';
import {
  checkParamHeaders,
  checkStandardHeaders,
  collectMcpHeaders,
  collectParamAnnotations,
  NAME_SOURCE,
  type ParamAnnotation,
} from './headers';
import {
  CACHE_SCOPE,
  CACHE_TTL_MS,
  ErrorCode,
  LOG_LEVELS,
  META_CLIENT_CAPABILITIES,
  META_LOG_LEVEL,
  META_PROTOCOL_VERSION,
  META_SERVER_INFO,
  PROTOCOL_VERSION,
  SERVER_NAME,
  SUPPORTED_VERSIONS,
} from './protocol';
import { TOOLS, toolDefinitions, type ToolDef } from './tools';
import { toolErrorContent, toolErrorText } from './tools/error-result';
import { compileArgsValidator, type ArgsValidator } from './args';
import { RESOURCES, INSTRUCTIONS } from './resources';

export interface McpRequest {
  /** The body as parsed JSON (the HTTP layer parsed it, and answered a body that is not JSON itself). */
  message: unknown;
  rawHeaders: readonly string[];
  principal: Principal;
  /** Made on demand (only tools need one): aborted when the client goes away. */
  signal?: () => AbortSignal;
  /** Told of a sign's progress (the HTTP layer frees a sign waiting for a person of its in-flight place). */
  onProgress?: (p: SignProgress) => void;
}

/** What a tool call did, for the access log: never an argument an agent wrote beyond the key's name. */
export interface ToolSummary {
  tool: string;
  key: string | null;
  outcome: string;
  signature: string | null;
}

/** body null: 202 Accepted with no body. */
export interface McpReply {
  status: number;
  /** The JSON-RPC reply as UTF-8 JSON. */
  body: Buffer | null;
  /** For logs and metrics: the JSON-RPC method when readable, and the error code if any. */
  method: string | null;
  errorCode?: number;
  /** A successful read that changes nothing (discover, the lists, a resource, key_show): logged at debug. */
  read?: boolean;
  tool?: ToolSummary;
}

export interface McpObserver {
  toolResult?(tool: string, outcome: string, failedCheck: string | null, durationMs: number): void;
}

export interface McpServiceOptions {
  version: string;
  paramHeaders: boolean;
  /** Resolves once the engine is open; tools wait for it, everything else answers without it. */
  engine: () => Promise<SignerEngine>;
  log?: { error(obj: object, msg?: string): void };
  observer?: McpObserver;
}

interface PreparedTool {
  def: ToolDef;
  validate: ArgsValidator;
  annotations: ParamAnnotation[];
}

export class McpService {
  private readonly tools = new Map<string, PreparedTool>();
  private readonly meta: object;
  private readonly discoverResult: Buffer;
  private readonly toolsListResult: Buffer;
  private readonly resourcesListResult: Buffer;
  private readonly templatesListResult: Buffer;
  private readonly readResult = new Map<string, Buffer>();
  private readonly initializeMessage = `Unsupported protocol version: this server speaks only MCP ${PROTOCOL_VERSION}, which has no initialize handshake; send server/discover or any request with params._meta`;

  constructor(private readonly opts: McpServiceOptions) {
    this.meta = { [META_SERVER_INFO]: { name: SERVER_NAME, version: opts.version } };
    const defs = toolDefinitions(opts.paramHeaders);
    for (const def of defs) {
      // Refuses to start on a definition that breaks the x-mcp-header rules (clients would drop the tool).
      this.tools.set(def.name, {
        def,
        validate: compileArgsValidator(def.inputSchema),
        annotations: collectParamAnnotations(def.name, def.inputSchema),
      });
    }
    const cacheable = (result: object): Buffer =>
      Buffer.from(
        JSON.stringify({
          resultType: 'complete',
          ...result,
          ttlMs: CACHE_TTL_MS,
          cacheScope: CACHE_SCOPE,
          _meta: this.meta,
        }),
      );
    this.discoverResult = cacheable({
      supportedVersions: SUPPORTED_VERSIONS,
      capabilities: { tools: {}, resources: {} },
      instructions: INSTRUCTIONS,
    });
    this.toolsListResult = cacheable({ tools: defs });
    this.resourcesListResult = cacheable({
      resources: RESOURCES.map((r) => ({
        uri: r.uri,
        name: r.name,
        title: r.title,
        description: r.description,
        mimeType: r.mimeType,
        size: Buffer.byteLength(r.text),
      })),
    });
    this.templatesListResult = cacheable({ resourceTemplates: [] });
    for (const r of RESOURCES)
      this.readResult.set(r.uri, cacheable({ contents: [{ uri: r.uri, mimeType: r.mimeType, text: r.text }] }));
  }

  /** The tool definitions as served (for tests and the relay). */
  toolDefs(): ToolDef[] {
    return [...this.tools.values()].map((t) => t.def);
  }

  async handle(req: McpRequest): Promise<McpReply> {
    const msg = readMessage(req.message);
    if (msg.kind === 'invalid') return this.fail(null, msg.id, msg.code, msg.message);
    if (msg.kind === 'notification') return { status: 202, body: null, method: msg.method };
    const { id, method } = msg;

    // A legacy client's handshake is told which revision we speak (-32022). A client of this revision that
    // sends `initialize` with its own _meta is calling a method the revision removed: -32601 below, as the
    // conformance harness checks (SEP-2575).
    if (method === 'initialize' && !speaksThisRevision(msg.params)) {
      const requested =
        isRecord(msg.params) && typeof msg.params.protocolVersion === 'string' ? msg.params.protocolVersion : '';
      return this.fail(method, id, ErrorCode.UnsupportedProtocolVersion, this.initializeMessage, {
        supported: SUPPORTED_VERSIONS,
        requested,
      });
    }

    // _meta fields, and the params the headers are compared with (-32602, 400).
    const p = msg.params;
    if (!isRecord(p))
      return this.fail(method, id, ErrorCode.InvalidParams, 'Invalid params: params with _meta is required');
    const m = p._meta;
    if (!isRecord(m)) return this.fail(method, id, ErrorCode.InvalidParams, 'Invalid params: params._meta is required');
    const version = m[META_PROTOCOL_VERSION];
    if (typeof version !== 'string')
      return this.fail(
        method,
        id,
        ErrorCode.InvalidParams,
        `Invalid params: _meta["${META_PROTOCOL_VERSION}"] must be a string`,
      );
    const caps = m[META_CLIENT_CAPABILITIES];
    if (!isRecord(caps))
      return this.fail(
        method,
        id,
        ErrorCode.InvalidParams,
        `Invalid params: _meta["${META_CLIENT_CAPABILITIES}"] must be an object`,
      );
    const logLevel = m[META_LOG_LEVEL];
    if (logLevel !== undefined && (typeof logLevel !== 'string' || !LOG_LEVELS.includes(logLevel)))
      return this.fail(
        method,
        id,
        ErrorCode.InvalidParams,
        `Invalid params: _meta["${META_LOG_LEVEL}"] is not a log level`,
      );
    const nameField = NAME_SOURCE[method];
    let nameValue: string | null = null;
    if (nameField !== undefined) {
      const v = p[nameField];
      if (typeof v !== 'string')
        return this.fail(method, id, ErrorCode.InvalidParams, `Invalid params: params.${nameField} must be a string`);
      nameValue = v;
    }

    // Headers against the body (-32020, 400).
    const headers = collectMcpHeaders(req.rawHeaders);
    const mismatch = checkStandardHeaders(headers, { method, protocolVersion: version, nameValue });
    if (mismatch !== null) return this.fail(method, id, ErrorCode.HeaderMismatch, mismatch);
    const tool = method === 'tools/call' && nameValue !== null ? this.tools.get(nameValue) : undefined;
    if (tool && tool.annotations.length > 0) {
      const paramMismatch = checkParamHeaders(headers, tool.annotations, p.arguments);
      if (paramMismatch !== null) return this.fail(method, id, ErrorCode.HeaderMismatch, paramMismatch);
    }

    // Version (-32022, 400).
    if (!SUPPORTED_VERSIONS.includes(version)) {
      return this.fail(
        method,
        id,
        ErrorCode.UnsupportedProtocolVersion,
        `Unsupported protocol version ${JSON.stringify(version)}; this server supports ${SUPPORTED_VERSIONS.join(', ')}`,
        {
          supported: SUPPORTED_VERSIONS,
          requested: version,
        },
      );
    }

    switch (method) {
      case 'server/discover':
        return this.ok(method, id, this.discoverResult);
      case 'tools/list':
        return this.ok(method, id, this.toolsListResult);
      case 'resources/list':
        return this.ok(method, id, this.resourcesListResult);
      case 'resources/templates/list':
        return this.ok(method, id, this.templatesListResult);
      case 'resources/read': {
        const result = nameValue === null ? undefined : this.readResult.get(nameValue);
        if (result === undefined)
          return this.fail(method, id, ErrorCode.InvalidParams, 'Resource not found', { uri: nameValue }, true);
        return this.ok(method, id, result);
      }
      case 'tools/call':
        if (!tool)
          return this.fail(
            method,
            id,
            ErrorCode.InvalidParams,
            `Unknown tool: ${JSON.stringify(nameValue)}; the tools are check, sign, key_show and halt`,
            undefined,
            true,
          );
        return this.callTool(id, tool, p.arguments, req);
      default:
        return this.fail(method, id, ErrorCode.MethodNotFound, `Method not found: ${JSON.stringify(method)}`);
    }
  }

  private ok(method: string, id: RequestId, result: Buffer): McpReply {
    return { status: 200, body: resultReplyBytes(id, result), method, read: true };
  }

  /** An error reply; header, envelope and version problems travel on 400, method-level ones on 200, -32601 on 404. */
  private fail(
    method: string | null,
    id: RequestId | undefined,
    code: ErrorCode,
    message: string,
    data?: unknown,
    methodLevel = false,
  ): McpReply {
    const status = code === ErrorCode.MethodNotFound ? 404 : methodLevel ? 200 : 400;
    return { status, body: Buffer.from(errorReply(id, code, message, data)), method, errorCode: code };
  }

  private toolReply(
    id: RequestId,
    summary: ToolSummary,
    structured: object | null,
    text: string,
    isError: boolean,
    read = false,
  ): McpReply {
    return {
      status: 200,
      body: Buffer.from(resultReply(id, this.toolResultJson(structured, text, isError))),
      method: 'tools/call',
      read,
      tool: summary,
    };
  }

  private toolResultJson(structured: object | null, text: string, isError: boolean): string {
    const result = {
      content: [{ type: 'text', text }],
      ...(structured !== null ? { structuredContent: structured } : {}),
      isError,
      resultType: 'complete',
      _meta: this.meta,
    };
    return JSON.stringify(result);
  }

  /** Arguments checked once against the tool's schema; then the engine runs the tool. */
  private async callTool(id: RequestId, tool: PreparedTool, rawArgs: unknown, req: McpRequest): Promise<McpReply> {
    const name = tool.def.name;
    const checked = tool.validate(rawArgs);
    if (!checked.ok) {
      this.opts.observer?.toolResult?.(name, 'invalid_arguments', null, 0);
      const summary = { tool: name, key: null, outcome: 'invalid_arguments', signature: null };
      const e = new SignerError('arguments_invalid', { tool: name, detail: checked.message });
      return this.toolReply(id, summary, toolErrorContent(e), toolErrorText(e), true);
    }
    const key = typeof checked.args.key === 'string' ? checked.args.key : null;
    return this.runTool(id, name, checked.args, key, req);
  }

  private async runTool(
    id: RequestId,
    name: ToolDef['name'],
    args: Record<string, unknown>,
    key: string | null,
    req: McpRequest,
  ): Promise<McpReply> {
    const started = performance.now();
    const summary = (outcome: string, signature: string | null = null): ToolSummary => ({
      tool: name,
      key,
      outcome,
      signature,
    });
    try {
      const engine = await this.opts.engine();
      const r = await TOOLS[name].run({
        engine,
        args,
        key,
        principal: req.principal,
        signal: req.signal,
        onProgress: req.onProgress,
      });
      this.opts.observer?.toolResult?.(name, r.outcome, r.failedCheck, performance.now() - started);
      return this.toolReply(
        id,
        { tool: name, key: r.key, outcome: r.outcome, signature: r.signature },
        r.structured,
        JSON.stringify(r.structured, null, 2),
        r.isError,
        r.read,
      );
    } catch (e) {
      if (isSignerError(e)) {
        // A refused key, a payload that does not parse, the RPC failing before anything was sent: the tool ran and
        // failed, so the model sees it and can act.
        const outcome = `error_${e.code}`;
        this.opts.observer?.toolResult?.(
          name,
          outcome,
          e.code === 'key_not_authorized' ? 'authorized' : null,
          performance.now() - started,
        );
        // A key the token may not use is the `authorized` refusal more than an error: check and sign report it with
        // its reason; key_show and halt, which have no report to carry it, answer it in text alone.
        const structured = e.code === 'key_not_authorized' ? null : toolErrorContent(e);
        return this.toolReply(id, summary(outcome), structured, toolErrorText(e), true);
      }
      this.opts.log?.error({ tool: name, err: errorMessage(e) }, 'tool failed unexpectedly');
      this.opts.observer?.toolResult?.(name, 'internal_error', null, performance.now() - started);
      return {
        ...this.fail(
          'tools/call',
          id,
          ErrorCode.InternalError,
          'Internal error: the signer failed unexpectedly; see its logs',
          undefined,
          true,
        ),
        tool: summary('internal_error'),
      };
    }
  }
}

function speaksThisRevision(params: unknown): boolean {
  if (!isRecord(params) || !isRecord(params._meta)) return false;
  const version = params._meta[META_PROTOCOL_VERSION];
  return typeof version === 'string' && SUPPORTED_VERSIONS.includes(version);
}
