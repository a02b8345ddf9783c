/**
 * The MCP endpoint, free of HTTP framework: bytes and headers in, status and bytes out. It runs the checks in the
 * seed's order — one JSON message → `initialize` → `_meta` → headers against the body → version — then the method
 * table. Every static answer (discover, the lists, each resource) is serialised once at construction.
 */
import type { SignerEngine, Principal, KeyView } from '../signer/types';
import { isSuccessOutcome, type Report } from '../signer/report';
import { isSignerError, errorMessage } from '../util/errors';
import { errorReply, parseMessage, resultReply, resultRest, type ReplyBody, type RequestId } from './envelope';
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
import { toolDefinitions, type ToolDef } from './tool-defs';
import { compileArgsValidator, type ArgsValidator } from './args';
import { RESOURCES, INSTRUCTIONS } from './resources';

export interface McpRequest {
  body: Buffer;
  rawHeaders: readonly string[];
  principal: Principal;
  /** Made on demand (only tools need one): aborted when the client goes away. */
  signal?: () => AbortSignal;
}

/** body null: 202 Accepted with no body. */
export interface McpReply {
  status: number;
  body: ReplyBody | null;
  /** For logs and metrics: the JSON-RPC method when readable, and the error code if any. */
  method: string | null;
  errorCode?: number;
  /** A successful read that changes nothing (discover, the lists, a resource, key_show): logged at debug. */
  read?: boolean;
}

export interface McpObserver {
  toolResult?(tool: string, outcome: string, failedCheck: string | null, durationMs: number): void;
}

export interface McpServiceOptions {
  version: string;
  paramHeaders: boolean;
  /** Resolves once the engine is open; tools wait for it, everything else answers without it. */
  engine: () => Promise<SignerEngine>;
  /** The engine if it is open already (key_show answers from its cache without waiting). */
  engineIfOpen?: () => SignerEngine | null;
  log?: { error(obj: object, msg?: string): void };
  observer?: McpObserver;
}

type Params = Record<string, unknown>;

interface PreparedTool {
  def: ToolDef;
  validate: ArgsValidator;
  annotations: ParamAnnotation[];
}

export class McpService {
  private readonly tools = new Map<string, PreparedTool>();
  private readonly meta: object;
  private readonly discoverRest: Buffer;
  private readonly toolsListRest: Buffer;
  private readonly resourcesListRest: Buffer;
  private readonly templatesListRest: Buffer;
  private readonly readRest = new Map<string, Buffer>();
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
      resultRest(
        JSON.stringify({
          resultType: 'complete',
          ...result,
          ttlMs: CACHE_TTL_MS,
          cacheScope: CACHE_SCOPE,
          _meta: this.meta,
        }),
      );
    this.discoverRest = cacheable({
      supportedVersions: SUPPORTED_VERSIONS,
      capabilities: { tools: {}, resources: {} },
      instructions: INSTRUCTIONS,
    });
    this.toolsListRest = cacheable({ tools: defs });
    this.resourcesListRest = cacheable({
      resources: RESOURCES.map((r) => ({
        uri: r.uri,
        name: r.name,
        title: r.title,
        description: r.description,
        mimeType: r.mimeType,
        size: Buffer.byteLength(r.text),
      })),
    });
    this.templatesListRest = cacheable({ resourceTemplates: [] });
    for (const r of RESOURCES)
      this.readRest.set(r.uri, cacheable({ contents: [{ uri: r.uri, mimeType: r.mimeType, text: r.text }] }));
  }

  /** The tool definitions as served (for tests and the relay). */
  toolDefs(): ToolDef[] {
    return [...this.tools.values()].map((t) => t.def);
  }

  handle(req: McpRequest): McpReply | Promise<McpReply> {
    const msg = parseMessage(req.body);
    if (msg.kind === 'invalid') return this.fail(null, msg.id, msg.code, msg.message);
    if (msg.kind === 'notification') return { status: 202, body: null, method: msg.method };
    const { id, method } = msg;

    // A legacy client's handshake is told which revision we speak (-32022). A client of this revision that
    // sends `initialize` with its own _meta is calling a method the revision removed: -32601 below, as the
    // conformance harness checks (SEP-2575).
    if (method === 'initialize' && !speaksThisRevision(msg.params)) {
      const p = msg.params as Params | undefined;
      const requested = typeof p?.protocolVersion === 'string' ? p.protocolVersion : '';
      return this.fail(method, id, ErrorCode.UnsupportedProtocolVersion, this.initializeMessage, {
        supported: SUPPORTED_VERSIONS,
        requested,
      });
    }

    // _meta fields, and the params the headers are compared with (-32602, 400).
    const params = msg.params;
    if (typeof params !== 'object' || params === null || Array.isArray(params))
      return this.fail(method, id, ErrorCode.InvalidParams, 'Invalid params: params with _meta is required');
    const p = params as Params;
    const meta = p._meta;
    if (typeof meta !== 'object' || meta === null || Array.isArray(meta))
      return this.fail(method, id, ErrorCode.InvalidParams, 'Invalid params: params._meta is required');
    const m = meta as Params;
    const version = m[META_PROTOCOL_VERSION];
    if (typeof version !== 'string')
      return this.fail(
        method,
        id,
        ErrorCode.InvalidParams,
        `Invalid params: _meta["${META_PROTOCOL_VERSION}"] must be a string`,
      );
    const caps = m[META_CLIENT_CAPABILITIES];
    if (typeof caps !== 'object' || caps === null || Array.isArray(caps))
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
    const tool = method === 'tools/call' ? this.tools.get(nameValue!) : undefined;
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
        return this.ok(method, id, this.discoverRest);
      case 'tools/list':
        return this.ok(method, id, this.toolsListRest);
      case 'resources/list':
        return this.ok(method, id, this.resourcesListRest);
      case 'resources/templates/list':
        return this.ok(method, id, this.templatesListRest);
      case 'resources/read': {
        const rest = this.readRest.get(nameValue!);
        if (rest === undefined)
          return this.fail(method, id, ErrorCode.InvalidParams, 'Resource not found', { uri: nameValue }, true);
        return this.ok(method, id, rest);
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

  private ok(method: string, id: RequestId, rest: Buffer): McpReply {
    return { status: 200, body: resultReply(id, rest), method, read: true };
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
    return { status, body: errorReply(id, code, message, data), method, errorCode: code };
  }

  private toolReply(id: RequestId, structured: object | null, text: string, isError: boolean): McpReply {
    return {
      status: 200,
      body: resultReply(id, resultRest(this.toolResultJson(structured, text, isError))),
      method: 'tools/call',
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

  /** key_show's result: the views as text and as structuredContent. */
  private keyShowResult(keys: KeyView[]): Buffer {
    const out = { keys };
    return resultRest(this.toolResultJson(out, JSON.stringify(out, null, 2), false));
  }

  /** Arguments checked once, then the engine runs the tool. */
  private callTool(id: RequestId, tool: PreparedTool, rawArgs: unknown, req: McpRequest): McpReply | Promise<McpReply> {
    const name = tool.def.name;
    const checked = tool.validate(rawArgs);
    if (!checked.ok) {
      this.opts.observer?.toolResult?.(name, 'invalid_arguments', null, 0);
      return this.toolReply(id, null, `error: invalid arguments for ${name}: ${checked.message}`, true);
    }
    const key = (checked.args.key as string | undefined) ?? null;
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
    try {
      const engine = await this.opts.engine();
      switch (name) {
        case 'check':
        case 'sign': {
          // Only check and sign wait on anything a departed client could cancel (simulation, confirmation).
          const signal = req.signal?.();
          const report: Report =
            name === 'check'
              ? await engine.check({ payload: args.payload, key, principal: req.principal, signal })
              : await engine.sign({
                  payload: args.payload,
                  key,
                  intent: (args.intent as string | undefined) ?? null,
                  principal: req.principal,
                  signal,
                });
          this.opts.observer?.toolResult?.(name, report.outcome, report.failed_check, performance.now() - started);
          return this.toolReply(id, report, JSON.stringify(report, null, 2), !isSuccessOutcome(report.outcome));
        }
        case 'key_show': {
          const keys = await engine.keyShow({ key, principal: req.principal });
          this.opts.observer?.toolResult?.(name, 'ok', null, performance.now() - started);
          return { status: 200, body: resultReply(id, this.keyShowResult(keys)), method: 'tools/call', read: true };
        }
        case 'halt': {
          const result = await engine.halt({ key, reason: args.reason as string, principal: req.principal });
          const failed = result.not_recorded.length > 0;
          this.opts.observer?.toolResult?.(name, failed ? 'not_recorded' : 'ok', null, performance.now() - started);
          return this.toolReply(id, result, JSON.stringify(result, null, 2), failed);
        }
      }
    } catch (e) {
      if (isSignerError(e)) {
        // A refused key, a payload that does not parse, the RPC failing before anything was sent: the tool ran and
        // failed, so the model sees it and can act.
        this.opts.observer?.toolResult?.(
          name,
          `error_${e.code}`,
          e.code === 'key_not_authorized' ? 'authorized' : null,
          performance.now() - started,
        );
        return this.toolReply(id, null, `error: ${e.message}`, true);
      }
      this.opts.log?.error({ tool: name, err: errorMessage(e) }, 'tool failed unexpectedly');
      this.opts.observer?.toolResult?.(name, 'internal_error', null, performance.now() - started);
      return this.fail(
        'tools/call',
        id,
        ErrorCode.InternalError,
        'Internal error: the signer failed unexpectedly; see its logs',
        undefined,
        true,
      );
    }
  }
}

function speaksThisRevision(params: unknown): boolean {
  if (typeof params !== 'object' || params === null) return false;
  const meta = (params as Params)._meta;
  if (typeof meta !== 'object' || meta === null) return false;
  const version = (meta as Params)[META_PROTOCOL_VERSION];
  return typeof version === 'string' && SUPPORTED_VERSIONS.includes(version);
}
