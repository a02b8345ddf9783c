/**
 * How the built service starts. `npm run build` bundles the service (serve.ts with everything of ours and of its
 * HTTP libraries) into serve.bundle.js, makes a V8 code cache of it (serve.bundle.cache), and writes serve.js as a
 * stub that calls `launch`. Compiling the 1.7 MB bundle is a good part of the service's start-up; with the cache,
 * V8 takes the bytecode of every function that runs while the modules load from the file instead. V8 accepts a cache
 * only from the same Node.js build under the same V8 flags; a rejected one costs nothing but the compile that would
 * have happened anyway (docs/performance.md, "Start-up").
 *
 * This module is not bundled and loads nothing but Node's own modules: it runs before the bundle.
 */
import fs from 'node:fs';
import { createRequire, Module } from 'node:module';
import path from 'node:path';
import vm from 'node:vm';
import { limitOldGenerationGrowth } from './heap';

/**
 * The V8 flags the service runs with, on serve.js's `#!` line (so the image's `sa-forge-signer-serve` and an npm bin
 * link pass them; Node refuses the second in NODE_OPTIONS); the build makes the code cache under them. 8 MiB
 * semi-spaces: the service's garbage is short-lived request objects; V8's default (16 MiB) holds ~20 MiB more under
 * load, 2 MiB collects so often that request objects are promoted and CPU per request rises by a quarter. At that
 * size from the start: no young collection runs while the service loads (docs/performance.md, "Memory").
 */
export const SERVE_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=8', '--min-semi-space-size=8'];

export const BUNDLE_FILE = 'serve.bundle.js';
export const CODE_CACHE_FILE = 'serve.bundle.cache';

type ModuleWrapper = (
  exports: unknown,
  require: NodeJS.Require,
  module: NodeJS.Module,
  filename: string,
  dirname: string,
) => void;

export interface CompiledBundle {
  script: vm.Script;
  /** true: the cache did not fit this process (other Node.js or flags); false: used; undefined: no cache file. */
  cacheRejected: boolean | undefined;
}

/** Compiles the bundle in `dir` as a CommonJS module, with its code cache when there is one. */
export function compileBundle(dir: string, useCache = true): CompiledBundle {
  const file = path.join(dir, BUNDLE_FILE);
  // The bundle is ASCII: read as latin1, V8 keeps it as a one-byte string.
  const source = fs.readFileSync(file, 'latin1');
  let cachedData: Buffer | undefined;
  if (useCache) {
    try {
      cachedData = fs.readFileSync(path.join(dir, CODE_CACHE_FILE));
    } catch {
      cachedData = undefined;
    }
  }
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: file,
    cachedData,
  });
  return { script, cacheRejected: script.cachedDataRejected };
}

function run(script: vm.Script, module: NodeJS.Module, dir: string): void {
  const file = path.join(dir, BUNDLE_FILE);
  // createRequire's `require.main` is the process's main module: when `module` is that module (the stub), the
  // bundle sees itself as the program and starts the service; any other module only loads.
  const wrapper = script.runInThisContext() as ModuleWrapper;
  wrapper.call(module.exports, module.exports, createRequire(file), module, file, dir);
}

/** Runs the bundled service in `dir` as the program `main` (the stub's own module). */
export function launch(main: NodeJS.Module, dir: string): void {
  limitOldGenerationGrowth();
  run(compileBundle(dir).script, main, dir);
}

/**
 * Makes the code cache: loads the bundle's modules (not the service: the module is not the program's main), so that
 * every function that runs while they load is compiled, then writes what V8 compiled. The build runs it in a
 * process with SERVE_NODE_FLAGS.
 */
export function writeCodeCache(dir: string): void {
  limitOldGenerationGrowth();
  const { script } = compileBundle(dir, false);
  run(script, new Module(path.join(dir, BUNDLE_FILE)), dir);
  fs.writeFileSync(path.join(dir, CODE_CACHE_FILE), script.createCachedData());
}
