/**
 * One POST of a JSON-RPC message to the service over plain node:http (or node:https, loaded only for an https
 * URL), on a keep-alive agent. Answers the status and either the JSON body, the messages of an event stream as
 * they arrive, or a short excerpt of anything else; throws `PostError` for a transport failure, an abort or a
 * body too large to be a reply.
 */
import http from 'node:http';
import type https from 'node:https';
import { SseParser } from './sse';

export interface PostTarget {
  url: URL;
  agent: http.Agent;
  request: typeof http.request;
}

export function postTarget(url: URL): PostTarget {
  if (url.protocol === 'https:') {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose: node:https loads only for an https URL
    const mod = require('node:https') as typeof https;
    return { url, agent: new mod.Agent({ keepAlive: true }), request: mod.request };
  }
  return { url, agent: new http.Agent({ keepAlive: true }), request: http.request };
}

export type PostResult =
  | { kind: 'json'; status: number; text: string }
  | { kind: 'stream'; status: number; ended: 'done' | 'eof' }
  | { kind: 'empty'; status: number }
  | { kind: 'other'; status: number; contentType: string; excerpt: string };

export type PostFailure = 'aborted' | 'timeout' | 'network' | 'too_large';

export class PostError extends Error {
  constructor(
    readonly kind: PostFailure,
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

export interface PostOptions {
  headers: Record<string, string>;
  body: Buffer;
  signal: AbortSignal;
  maxBodyBytes: number;
  /** Each `data` of an event-stream reply; return true once the final response arrived (the stream is closed). */
  onStreamMessage: (data: string) => boolean;
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;
const SSE_TYPE = /^text\/event-stream\s*(?:;|$)/i;
const EXCERPT_BYTES = 512;

export function post(target: PostTarget, opts: PostOptions): Promise<PostResult> {
  return new Promise<PostResult>((resolve, reject) => {
    let settled = false;
    const settle = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      opts.signal.removeEventListener('abort', onAbort);
      fn();
    };
    const { url } = target;
    const req = target.request({
      protocol: url.protocol,
      hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
      port: url.port || undefined,
      path: `${url.pathname}${url.search}`,
      method: 'POST',
      agent: target.agent,
      headers: { ...opts.headers, 'Content-Length': String(opts.body.length) },
    });
    const onAbort = (): void => {
      const reason: unknown = opts.signal.reason;
      const kind: PostFailure = reason instanceof PostError ? reason.kind : 'aborted';
      // Destroying the socket is the cancellation on HTTP (cancellation.mdx §Transport-Specific Cancellation).
      req.destroy();
      settle(() => reject(reason instanceof PostError ? reason : new PostError(kind, 'aborted')));
    };
    if (opts.signal.aborted) {
      onAbort();
      return;
    }
    opts.signal.addEventListener('abort', onAbort, { once: true });

    req.on('error', (e: NodeJS.ErrnoException) => settle(() => reject(new PostError('network', e.message, e.code))));
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      const type = res.headers['content-type'] ?? '';
      res.on('error', (e: NodeJS.ErrnoException) => settle(() => reject(new PostError('network', e.message, e.code))));
      res.on('aborted', () =>
        settle(() =>
          reject(new PostError('network', 'the connection closed before the reply was complete', 'ECONNRESET')),
        ),
      );

      if (SSE_TYPE.test(type)) {
        let finished = false;
        const parser = new SseParser((data) => {
          if (!finished && opts.onStreamMessage(data)) {
            finished = true;
            // The final response ends the exchange; a server that keeps the stream open is not waited for.
            // Settled first: destroying an unfinished response emits 'aborted' at once.
            settle(() => resolve({ kind: 'stream', status, ended: 'done' }));
            res.destroy();
          }
        });
        res.on('data', (chunk: Buffer) => parser.push(chunk));
        res.on('end', () => {
          parser.end();
          settle(() => resolve({ kind: 'stream', status, ended: 'eof' }));
        });
        return;
      }

      // No Content-Type at all is read as JSON too: the body then decides (a JSON-RPC reply or not).
      const isJson = JSON_TYPE.test(type) || type === '';
      const limit = isJson ? opts.maxBodyBytes : EXCERPT_BYTES;
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        if (size >= limit) return;
        chunks.push(chunk);
        size += chunk.length;
        if (isJson && size > limit) {
          settle(() => reject(new PostError('too_large', `the reply is larger than ${limit} bytes`)));
          res.destroy();
        }
      });
      res.on('end', () => {
        const bytes = Buffer.concat(chunks, size);
        settle(() => {
          if (bytes.length === 0) resolve({ kind: 'empty', status });
          else if (isJson) resolve({ kind: 'json', status, text: bytes.toString('utf8') });
          else
            resolve({
              kind: 'other',
              status,
              contentType: type,
              excerpt: bytes.subarray(0, EXCERPT_BYTES).toString('utf8'),
            });
        });
      });
    });
    req.end(opts.body);
  });
}
