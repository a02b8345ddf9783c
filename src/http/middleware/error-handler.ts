/**
 * The one error handler: the body parser's failures get the answers the transport's rows expect (413, 415, and a
 * body that is not JSON is JSON-RPC's -32700 with no id); anything else is a 500 logged with its message, never
 * with the request's headers or body.
 */
import type { ErrorRequestHandler } from 'express';
import type { Logger } from 'pino';
import { parseErrorReply } from '../../mcp/envelope';
import { errorMessage } from '../../util/errors';
import { isRecord } from '../../util/is-record';
import { sendError, sendJson } from '../send';

/** The `type` body-parser (through http-errors) gives each of its failures, if this is one. */
function bodyErrorType(err: unknown): string | null {
  return isRecord(err) && typeof err.type === 'string' ? err.type : null;
}

export function errorHandler(opts: { logger: Logger; bodyLimit: number }): ErrorRequestHandler {
  // eslint-disable-next-line @typescript-eslint/no-unused-vars -- Express tells an error handler by its four parameters
  return function answerError(err: unknown, req, res, _next) {
    if (res.headersSent) {
      // Answered already (a body deadline, a client gone): nothing more can be said on this response.
      res.destroy();
      return;
    }
    switch (bodyErrorType(err)) {
      case 'entity.too.large':
        sendError(res, 413, `body too large (limit ${opts.bodyLimit} bytes)`, { Connection: 'close' });
        return;
      case 'entity.parse.failed':
        sendJson(res, 400, parseErrorReply());
        return;
      case 'encoding.unsupported':
      case 'charset.unsupported':
        sendError(res, 415, 'the body must be JSON in UTF-8, without a Content-Encoding this service reads');
        return;
      case 'request.aborted':
      case 'request.size.invalid':
      case 'stream.encoding.set':
      case 'stream.not.readable':
        sendError(res, 400, 'the request body could not be read');
        return;
      default:
        opts.logger.error({ err: errorMessage(err), path: req.path }, 'request failed');
        sendError(res, 500, 'internal error');
        return;
    }
  };
}
