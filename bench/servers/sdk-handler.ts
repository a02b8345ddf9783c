/**
 * (b) The official MCP TypeScript SDK v2's stateless handler (createMcpHandler), mounted with
 * @modelcontextprotocol/node's toNodeHandler on @modelcontextprotocol/express's app, serving the same four tool
 * definitions behind the same kind of bearer check (sha256 compared in constant time); results in docs/performance.md.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { createMcpExpressApp } from '@modelcontextprotocol/express';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';

const tokenSha256 = Buffer.from(process.env.TOKEN_SHA256 ?? '', 'hex');
const payload = z.record(z.string(), z.unknown());

function buildServer(): McpServer {
  const server = new McpServer({ name: 'sdk-handler', version: '0.0.0' });
  server.registerTool(
    'check',
    {
      description: 'Run every check and a simulation on a payload. Never signs.',
      inputSchema: z.object({ payload, key: z.string().optional() }),
    },
    () => Promise.resolve({ content: [{ type: 'text' as const, text: '{"outcome":"ok"}' }] }),
  );
  server.registerTool(
    'sign',
    {
      description: 'Check, simulate, sign, send and confirm a payload.',
      inputSchema: z.object({ payload, key: z.string().optional(), intent: z.string().optional() }),
    },
    () => Promise.resolve({ content: [{ type: 'text' as const, text: '{"outcome":"confirmed"}' }] }),
  );
  server.registerTool(
    'key_show',
    { description: 'Show a key this token may use.', inputSchema: z.object({ key: z.string().optional() }) },
    ({ key }) =>
      Promise.resolve({
        content: [{ type: 'text' as const, text: JSON.stringify({ keys: [{ name: key ?? 'demo' }] }) }],
      }),
  );
  server.registerTool(
    'halt',
    {
      description: 'Stop all signing with a key now.',
      inputSchema: z.object({ key: z.string().optional(), reason: z.string() }),
    },
    () => Promise.resolve({ content: [{ type: 'text' as const, text: '{"halted":[]}' }] }),
  );
  return server;
}

function bearer(req: Request, res: Response, next: NextFunction): void {
  const m = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
  const ok = m !== null && timingSafeEqual(createHash('sha256').update(m[1]!).digest(), tokenSha256);
  if (!ok) {
    res.status(401).json({ error: 'unauthorized' });
    return;
  }
  next();
}

const mcp = toNodeHandler(createMcpHandler(buildServer, { legacy: 'reject' }));
const app = createMcpExpressApp();
app.post('/mcp', bearer, (req: Request, res: Response) => void mcp(req, res, req.body));
app.listen(Number(process.env.PORT), '127.0.0.1');
