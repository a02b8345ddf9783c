/**
 * The console's static files: our script and style sheet, and @simplewebauthn/browser's ES modules served from
 * node_modules as they ship (the package root is resolved, as its dist files are not in its exports).
 */
import path from 'node:path';
import express, { Router } from 'express';
import { CONSOLE_SCRIPT } from './browser/console-script';
import { CONSOLE_STYLE } from './browser/console-style';

export function webauthnBrowserDir(): string {
  // The package's CommonJS entry is script/index.js; its ES modules sit beside, in esm/.
  return path.join(path.dirname(require.resolve('@simplewebauthn/browser')), '..', 'esm');
}

export function assetsRouter(): Router {
  const router = Router();
  const text = (type: string, body: string) => {
    const bytes = Buffer.from(body, 'utf8');
    return (_req: express.Request, res: express.Response) => {
      res.setHeader('Content-Type', type);
      res.setHeader('Cache-Control', 'no-cache');
      res.send(bytes);
    };
  };
  router.get('/console.js', text('text/javascript; charset=utf-8', CONSOLE_SCRIPT));
  router.get('/console.css', text('text/css; charset=utf-8', CONSOLE_STYLE));
  router.use(
    '/webauthn',
    express.static(webauthnBrowserDir(), { index: false, dotfiles: 'ignore', fallthrough: false }),
  );
  return router;
}
