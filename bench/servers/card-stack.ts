/**
 * The naive card stack: the design card's libraries with their defaults and nothing configured — express 5, pino-http
 * logging every request to a file, helmet, express-rate-limit, express.json on every path — and one route answering
 * fixed bytes (the service's tools/list reply). What "just use the card's stack" costs before any care.
 */
import fs from 'node:fs';
import express from 'express';
import helmet from 'helmet';
import { rateLimit } from 'express-rate-limit';
import { pino } from 'pino';
import { pinoHttp } from 'pino-http';

const body = fs.readFileSync(process.env.BODY_FILE ?? '');
const app = express();
app.use(pinoHttp({ logger: pino(pino.destination(process.env.LOG_FILE ?? '/dev/null')) }));
app.use(helmet());
app.use(rateLimit({ windowMs: 60_000, limit: 100_000_000 }));
app.use(express.json());
app.post('/mcp', (_req, res) => {
  res.type('application/json').send(body);
});
app.listen(Number(process.env.PORT), '127.0.0.1');
