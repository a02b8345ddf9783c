// Bundles the service's entrypoint (dist/src/cli/serve.js, as tsc wrote it) into serve.bundle.js, so that the
// process reads one file instead of resolving and reading ~300 modules of ours and of node_modules before it
// answers; makes the bundle's V8 code cache; and writes serve.js as the stub that starts the bundle with it
// (src/cli/serve-launch.ts; docs/performance.md, "Start-up"). All of our own code is in the bundle, the engine
// included, so there is one copy of each of our modules (classes such as SignerError are the same on both sides of a
// late require).
// Left in node_modules and loaded from there at run time: native and optional packages, and the packages only the
// engine and the metrics use (loaded after the listener has answered), which the bundle need not parse at start.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.join(root, 'dist/src/cli');
const entry = path.join(cli, 'serve.js');
const { BUNDLE_FILE, SERVE_NODE_FLAGS } = createRequire(import.meta.url)(path.join(cli, 'serve-launch.js'));
const bundle = path.join(cli, BUNDLE_FILE);

await build({
  entryPoints: [entry],
  outfile: bundle,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node24',
  // better-sqlite3 and pkcs11js: native addons; age-encryption: ES modules only, require()d by Node on first use of
  // an encrypted key (src/keys/age-file.ts); litesvm: a development dependency (--local only); pino-pretty and pg-native:
  // optional, loaded only when present and asked for; @solana/*, @solana-program/* (kit's program clients), pg and
  // prom-client: loaded with the engine and the metrics, after the first answer (a whole package stays outside, so
  // each still exists once). @simplewebauthn/browser: files the operator console serves to browsers from node_modules,
  // never loaded by the service (only its folder is resolved).
  external: [
    'better-sqlite3',
    'pkcs11js',
    'age-encryption',
    'litesvm',
    'pino-pretty',
    'pg-native',
    '@solana/*',
    '@solana-program/*',
    'pg',
    'prom-client',
    '@simplewebauthn/browser',
  ],
  // ASCII only, comments dropped: V8 keeps a script's source for as long as the process runs, and one non-ASCII
  // character in a comment made the whole 3.5 MB file a two-byte string (7 MB of heap that never goes away).
  // Names are kept, so stack traces stay readable.
  charset: 'ascii',
  minifyWhitespace: true,
  logLevel: 'warning',
});
// tsc's source map describes the file before bundling.
fs.rmSync(`${entry}.map`, { force: true });
// The bundle is compiled inside a function wrapper, where a `#!` line is a syntax error.
fs.writeFileSync(bundle, fs.readFileSync(bundle, 'latin1').replace(/^#!.*\n/, ''), 'latin1');
fs.writeFileSync(
  entry,
  `#!/usr/bin/env -S node ${SERVE_NODE_FLAGS.join(' ')}
"use strict";
// Written by scripts/bundle-serve.mjs: the service is ${BUNDLE_FILE}, started with its code cache (serve-launch).
require("./serve-launch").launch(module, __dirname);
`,
);
fs.chmodSync(entry, 0o755);
// In a process of its own, under the flags of the stub's #! line: V8 accepts the cache only under them.
execFileSync(
  process.execPath,
  [
    ...SERVE_NODE_FLAGS,
    '-e',
    `require(${JSON.stringify(path.join(cli, 'serve-launch.js'))}).writeCodeCache(${JSON.stringify(cli)})`,
  ],
  { stdio: 'inherit' },
);
