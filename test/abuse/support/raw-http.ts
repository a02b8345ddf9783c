/**
 * HTTP/1.1 written byte by byte over a net.Socket. Client libraries normalise what an attacker would not: they
 * merge or refuse duplicate headers, reject control characters, fix Content-Length and lowercase names. The
 * abuse suites need the exact bytes on the wire.
 */
import net from 'node:net';

export type RawHeader = [name: string, value: string];

export interface RawRequest {
  method?: string;
  target?: string;
  headers: RawHeader[];
  body?: Buffer;
  /** Content-Length to announce: the body's length by default; 'omit' sends none. */
  contentLength?: number | 'omit';
}

/** The request as bytes; header names and values are written as given (latin1, so any byte is possible). */
export function requestBytes(r: RawRequest): Buffer {
  const body = r.body ?? Buffer.alloc(0);
  let head = `${r.method ?? 'POST'} ${r.target ?? '/mcp'} HTTP/1.1\r\n`;
  for (const [n, v] of r.headers) head += `${n}: ${v}\r\n`;
  const cl = r.contentLength ?? body.length;
  if (cl !== 'omit') head += `Content-Length: ${cl}\r\n`;
  head += '\r\n';
  return Buffer.concat([Buffer.from(head, 'latin1'), body]);
}

export interface RawResponse {
  status: number;
  headers: RawHeader[];
  body: Buffer;
}

export function header(res: RawResponse, name: string): string | undefined {
  const lower = name.toLowerCase();
  return res.headers.find(([n]) => n.toLowerCase() === lower)?.[1];
}

export interface RawOptions {
  host?: string;
  timeoutMs?: number;
  /** Half-close after writing (a client that gives up mid-body). */
  endAfterWrite?: boolean;
  /** The answer has no body whatever its Content-Length says (a HEAD request). */
  noBody?: boolean;
}

interface Parsed {
  status: number;
  headers: RawHeader[];
  bodyStart: number;
  length: number | null;
  chunked: boolean;
}

/** One response from the front of `buf`: its length in bytes once complete (skipping 1xx interim answers). */
function parseResponse(
  buf: Buffer,
  atEnd: boolean,
  noBody: boolean,
): { response: RawResponse; used: number } | { error: string } | null {
  let offset = 0;
  for (;;) {
    const end = buf.indexOf('\r\n\r\n', offset);
    if (end < 0) return null;
    const lines = buf.subarray(offset, end).toString('latin1').split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0]!);
    if (!m) return { error: `not an HTTP response: ${JSON.stringify(lines[0])}` };
    const status = Number(m[1]);
    if (status >= 100 && status < 200 && status !== 101) {
      offset = end + 4;
      continue;
    }
    const headers = lines.slice(1).map((l): RawHeader => {
      const i = l.indexOf(':');
      return [l.slice(0, i).trim(), l.slice(i + 1).trim()];
    });
    const cl = headers.find(([n]) => n.toLowerCase() === 'content-length')?.[1];
    const p: Parsed = {
      status,
      headers,
      bodyStart: end + 4,
      length: cl === undefined ? null : Number(cl),
      chunked: /chunked/i.test(headers.find(([n]) => n.toLowerCase() === 'transfer-encoding')?.[1] ?? ''),
    };
    if (noBody) return { response: { status, headers, body: Buffer.alloc(0) }, used: p.bodyStart };
    const body = buf.subarray(p.bodyStart);
    if (p.length !== null) {
      if (body.length >= p.length)
        return { response: { status, headers, body: body.subarray(0, p.length) }, used: p.bodyStart + p.length };
      return atEnd ? { response: { status, headers, body }, used: buf.length } : null;
    }
    if (p.chunked) {
      const decoded = dechunk(body);
      if (decoded) return { response: { status, headers, body: decoded.body }, used: p.bodyStart + decoded.used };
      return atEnd ? { response: { status, headers, body }, used: buf.length } : null;
    }
    if (status === 204 || status === 304 || atEnd) return { response: { status, headers, body }, used: buf.length };
    return null;
  }
}

/**
 * Writes `bytes` on a fresh connection and reads one response. Resolves null when the server closes the
 * connection without answering; rejects when nothing happens within the timeout (a hung request is a failure).
 */
export function rawExchange(port: number, bytes: Buffer, opts: RawOptions = {}): Promise<RawResponse | null> {
  return exchangeOn(net.connect({ host: opts.host ?? '127.0.0.1', port }), bytes, opts).then((r) => {
    r.socket.destroy();
    return r.response;
  });
}

function exchangeOn(
  socket: net.Socket,
  bytes: Buffer,
  opts: RawOptions,
): Promise<{ response: RawResponse | null; socket: net.Socket; reusable: boolean }> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    let settled = false;
    let closed = false;
    const cleanup = (): void => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('close', onEnd);
      socket.off('error', onEnd);
    };
    const finish = (response: RawResponse | null, reusable: boolean, error?: Error): void => {
      if (settled) return;
      settled = true;
      cleanup();
      if (error) {
        socket.destroy();
        reject(error);
      } else resolve({ response, socket, reusable });
    };
    const timeoutMs = opts.timeoutMs ?? 10_000;
    const timer = setTimeout(() => finish(null, false, new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    const tryParse = (atEnd: boolean): void => {
      const r = parseResponse(buf, atEnd, opts.noBody === true);
      if (r === null) {
        if (atEnd) finish(null, false);
        return;
      }
      if ('error' in r) {
        finish(null, false, new Error(r.error));
        return;
      }
      const close = /close/i.test(r.response.headers.find(([n]) => n.toLowerCase() === 'connection')?.[1] ?? '');
      // Anything after the response, or a server that says it will close, ends the connection's reuse.
      finish(r.response, !closed && !close && r.used === buf.length);
    };
    const onData = (d: Buffer): void => {
      buf = Buffer.concat([buf, d]);
      tryParse(false);
    };
    const onEnd = (): void => {
      closed = true;
      tryParse(true);
    };
    socket.on('data', onData);
    socket.on('end', onEnd);
    socket.on('close', onEnd);
    socket.on('error', onEnd);
    socket.write(bytes, () => {
      if (opts.endAfterWrite) socket.end();
    });
  });
}

/**
 * One kept-alive connection for well-framed requests (a fresh TCP connection costs ~1 ms here, ten times a
 * request); a request whose framing is broken on purpose goes on a connection of its own.
 */
export class RawClient {
  private socket: net.Socket | null = null;

  constructor(
    private readonly port: number,
    private readonly host = '127.0.0.1',
  ) {}

  async exchange(bytes: Buffer, opts: RawOptions & { fresh?: boolean } = {}): Promise<RawResponse | null> {
    if (opts.fresh || opts.endAfterWrite) return rawExchange(this.port, bytes, { host: this.host, ...opts });
    const reused = this.socket !== null && !this.socket.destroyed;
    const socket = reused ? this.socket! : net.connect({ host: this.host, port: this.port, noDelay: true });
    this.socket = null;
    const r = await exchangeOn(socket, bytes, opts);
    if (r.response === null && reused) {
      // The server closed an idle kept-alive connection just as it was reused: not this request's doing.
      throw new Error('a kept-alive connection closed without an answer; rerun with fresh connections to tell');
    }
    if (r.reusable) this.socket = socket;
    else socket.destroy();
    return r.response;
  }

  close(): void {
    this.socket?.destroy();
    this.socket = null;
  }
}

function dechunk(body: Buffer): { body: Buffer; used: number } | null {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = body.indexOf('\r\n', at);
    if (eol < 0) return null;
    const size = parseInt(body.subarray(at, eol).toString('latin1'), 16);
    if (!Number.isFinite(size)) return null;
    if (size === 0) return body.length >= eol + 4 ? { body: Buffer.concat(parts), used: eol + 4 } : null;
    if (body.length < eol + 2 + size + 2) return null;
    parts.push(body.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}
