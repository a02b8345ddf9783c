/**
 * The console's one error handler: a CSRF refusal (csrf-csrf) is 403, a body that is not JSON 400, anything else a
 * 500 logged by its message only (never a cookie, a token or a body).
 */
import type { ErrorRequestHandler } from 'express';
import type { Logger } from 'pino';
import { sendError } from '../../http/send';
import { errorMessage } from '../../util/errors';
import { isRecord } from '../../util/is-record';

export function consoleErrorHandler(logger: Logger): ErrorRequestHandler {
  // eslint-disable-next-line @typescript-eslint/no-unused-vars -- Express tells an error handler by its four parameters
  return function answerError(err: unknown, req, res, _next) {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (isRecord(err) && err.code === 'EBADCSRFTOKEN') {
      sendError(res, 403, 'missing or invalid CSRF token: reload the page and try again');
      return;
    }
    if (isRecord(err) && typeof err.type === 'string' && err.type.startsWith('entity.')) {
      sendError(res, 400, 'the request body must be JSON of at most 64 KiB');
      return;
    }
    logger.error({ err: errorMessage(err), path: req.path }, 'console request failed');
    sendError(res, 500, 'internal error');
  };
}
