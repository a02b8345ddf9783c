/** Reads a JSON request body into a Buffer, bounded: 413 past the limit, 415 for a non-JSON Content-Type. */
import type { NextFunction, Request, Response } from 'express';
import { sendError } from './respond';

export interface RawBodyRequest extends Request {
  rawBody?: Buffer;
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

export function jsonBody(limit: number) {
  return function readBody(req: RawBodyRequest, res: Response, next: NextFunction): void {
    const type = req.headers['content-type'];
    if (type !== undefined && !JSON_TYPE.test(type)) {
      sendError(res, 415, 'Content-Type must be application/json');
      return;
    }
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > limit) {
      sendError(res, 413, `body too large (limit ${limit} bytes)`, { Connection: 'close' });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (fn: () => void): void => {
      if (done) return;
      done = true;
      req.removeListener('data', onData);
      req.removeListener('end', onEnd);
      req.removeListener('error', onError);
      fn();
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        finish(() => {
          req.pause();
          sendError(res, 413, `body too large (limit ${limit} bytes)`, { Connection: 'close' });
        });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void =>
      finish(() => {
        req.rawBody = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
        next();
      });
    const onError = (): void => finish(() => sendError(res, 400, 'the request body could not be read'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  };
}
