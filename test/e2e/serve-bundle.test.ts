/**
 * The built service as the image runs it: serve.js is a stub that starts serve.bundle.js with the V8 code cache
 * `npm run build` made, and V8 takes that cache only under the flags it was made with (the image's NODE_OPTIONS).
 */
import fs from 'node:fs';
import path from 'node:path';
import { assertBuilt, BIN, ROOT, run } from '../support/cli';
import { IMAGE_NODE_OPTIONS } from '../../src/cli/serve-launch';

const CLI = path.dirname(BIN.serve);

/** Whether V8 rejects the built cache in a fresh process with these node flags. */
async function cacheRejected(nodeFlags: readonly string[]): Promise<string> {
  const probe = `require(${JSON.stringify(path.join(CLI, 'heap.js'))}).limitOldGenerationGrowth();
process.stdout.write(String(require(${JSON.stringify(path.join(CLI, 'serve-launch.js'))}).compileBundle(${JSON.stringify(CLI)}).cacheRejected));`;
  const r = await run('-e', [probe], { env: { NODE_OPTIONS: nodeFlags.join(' ') } });
  expect(r.stderr).toBe('');
  return r.stdout;
}

describe('the built service (bundle and code cache)', () => {
  beforeAll(() => assertBuilt(BIN.serve));

  it('serve.js starts the bundle, which holds the service', async () => {
    expect(fs.readFileSync(BIN.serve, 'utf8')).toContain('require("./serve-launch").launch(module, __dirname)');
    expect(fs.statSync(path.join(CLI, 'serve.bundle.js')).size).toBeGreaterThan(500_000);
    const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const r = await run(BIN.serve, ['--version'], { env: { NODE_OPTIONS: IMAGE_NODE_OPTIONS.join(' ') } });
    expect(r).toMatchObject({ code: 0, stdout: `${version}\n` });
  });

  it('V8 takes the code cache under the flags of the image', async () => {
    expect(await cacheRejected(IMAGE_NODE_OPTIONS)).toBe('false');
  });

  it('under other flags V8 rejects it, and the service starts all the same', async () => {
    expect(await cacheRejected([])).toBe('true');
    const r = await run(BIN.serve, ['--help'], { env: { NODE_OPTIONS: '' } });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('sa-forge-signer-serve');
  });

  it('the image runs the service with the flags the cache is made under', () => {
    const dockerfile = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
    expect(/NODE_OPTIONS=(\S+)/.exec(dockerfile)?.[1]).toBe(IMAGE_NODE_OPTIONS.join(' '));
  });
});
