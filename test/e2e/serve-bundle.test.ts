/**
 * The built service as the image runs it: serve.js is a stub that starts serve.bundle.js with the V8 code cache
 * `npm run build` made, and V8 takes that cache only under the flags it was made with (the stub's `#!` line).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { assertBuilt, BIN, ROOT, run } from '../support/cli';
import { SERVE_NODE_FLAGS } from '../../src/cli/serve-launch';

const CLI = path.dirname(BIN.serve);

/** Whether V8 rejects the built cache in a fresh node started with these flags. */
async function cacheRejected(nodeFlags: readonly string[]): Promise<string> {
  const probe = `require(${JSON.stringify(path.join(CLI, 'heap.js'))}).limitOldGenerationGrowth();
process.stdout.write(String(require(${JSON.stringify(path.join(CLI, 'serve-launch.js'))}).compileBundle(${JSON.stringify(CLI)}).cacheRejected));`;
  const { stdout } = await promisify(execFile)(process.execPath, [...nodeFlags, '-e', probe]);
  return stdout;
}

describe('the built service (bundle and code cache)', () => {
  beforeAll(() => assertBuilt(BIN.serve));

  it("serve.js runs node with the service's flags and starts the bundle", async () => {
    const stub = fs.readFileSync(BIN.serve, 'utf8');
    expect(stub.split('\n')[0]).toBe(`#!/usr/bin/env -S node ${SERVE_NODE_FLAGS.join(' ')}`);
    expect(stub).toContain('require("./serve-launch").launch(module, __dirname)');
    expect(fs.statSync(BIN.serve).mode & 0o111).toBe(0o111);
    // run as a program, as the image's sa-forge-signer-serve runs it: through its #! line
    const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const { stdout } = await promisify(execFile)(BIN.serve, ['--version']);
    expect(stdout).toBe(`${version}\n`);
  });

  it('V8 takes the code cache under those flags', async () => {
    expect(await cacheRejected(SERVE_NODE_FLAGS)).toBe('false');
  });

  it('under flags V8 hashes differently it rejects the cache, and the service starts all the same', async () => {
    // --stack-size is part of V8's flag hash on every Node the project supports; whether the young-generation
    // flags are depends on the V8 version (Node 26 leaves them out), so they cannot stand for "other flags" here.
    expect(await cacheRejected(['--stack-size=2000'])).toBe('true');
    const r = await run(BIN.serve, ['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('sa-forge-signer-serve');
  });

  it("the image's sa-forge-signer-serve runs serve.js itself, so the #! line's flags apply", () => {
    const dockerfile = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
    expect(dockerfile).toContain(`exec /app/dist/src/cli/serve.js "$@"`);
    expect(dockerfile).not.toMatch(/NODE_OPTIONS=/);
  });
});
