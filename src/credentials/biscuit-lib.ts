/**
 * The Biscuit library (`@biscuit-auth/biscuit-wasm`), loaded on first use: a signer without `serve.credentials`
 * never reads its 2.3 MB of WebAssembly (test/e2e/lazy-modules.test.ts).
 *
 * The package is built for bundlers: its entry imports the `.wasm` file as an ES module, which Node loads only
 * behind an experimental warning and jest's module loader not at all. So the WebAssembly is instantiated here from
 * the package's own files: the JavaScript glue (an ES module Node require()s), the one snippet the module imports
 * (a clock), and the `.wasm` bytes. The glue's console functions are given to the module as no-ops: the library
 * prints a line when it starts and its panics would print the Rust message, and the service's output is its own log.
 */
import fs from 'node:fs';
import path from 'node:path';
import type * as BiscuitModule from '@biscuit-auth/biscuit-wasm' with { 'resolution-mode': 'import' };
import { SignerError } from '../util/errors';

export type BiscuitLib = typeof BiscuitModule;
/** A parsed credential (the library's `Biscuit` class; its constructor is private). */
export type BiscuitToken = BiscuitLib['Biscuit']['prototype'];

/** The part of the WebAssembly JavaScript API used here (the project's `lib` has no DOM types, where it is declared). */
interface WasmApi {
  Module: (new (bytes: Uint8Array) => object) & { imports(module: object): { module: string }[] };
  Instance: new (
    module: object,
    imports: Record<string, Record<string, unknown>>,
  ) => { exports: Record<string, unknown> };
}
const WASM = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

const PACKAGE = '@biscuit-auth/biscuit-wasm';
const GLUE = './biscuit_bg.js';
/** The console functions of the glue, by the names wasm-bindgen gives them. */
const CONSOLE_IMPORT = /^__wbg_(log|debug|info|warn|error)_/;

let loaded: BiscuitLib | undefined;

/** The package's `module` folder: its `exports` give no path to require(), so it is found on the resolution paths. */
function moduleDir(): string {
  for (const dir of require.resolve.paths(PACKAGE) ?? []) {
    const candidate = path.join(dir, PACKAGE, 'module');
    if (fs.existsSync(path.join(candidate, 'biscuit_bg.wasm'))) return candidate;
  }
  throw new SignerError(
    'config_invalid',
    `serve.credentials needs the ${PACKAGE} package, which is not installed (npm ci installs it)`,
  );
}

function instantiate(): BiscuitLib {
  const dir = moduleDir();
  /* eslint-disable @typescript-eslint/no-require-imports -- lazy on purpose (see above) */
  const glue = require(path.join(dir, 'biscuit_bg.js')) as BiscuitLib & Record<string, unknown>;
  const wasmModule = new WASM.Module(fs.readFileSync(path.join(dir, 'biscuit_bg.wasm')));
  const imports: Record<string, Record<string, unknown>> = {};
  for (const { module: name } of WASM.Module.imports(wasmModule)) {
    if (name in imports) continue;
    if (name === GLUE) {
      const quiet: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(glue)) quiet[k] = CONSOLE_IMPORT.test(k) ? () => undefined : v;
      imports[name] = quiet;
    } else {
      // A snippet the library ships beside the glue (`./snippets/…/inline0.js`).
      imports[name] = require(path.join(dir, name)) as Record<string, unknown>;
    }
  }
  /* eslint-enable @typescript-eslint/no-require-imports */
  const instance = new WASM.Instance(wasmModule, imports);
  const setWasm = glue.__wbg_set_wasm as (exports: Record<string, unknown>) => void;
  setWasm(instance.exports);
  (instance.exports.__wbindgen_start as () => void)();
  warmUp(glue);
  return glue;
}

/**
 * One authorization of a throwaway credential: V8 compiles the engine's WebAssembly on its first run (about 100 ms
 * here), which would otherwise fall on the first request and count against its evaluation time bound.
 */
function warmUp(lib: BiscuitLib): void {
  const pair = new lib.KeyPair(lib.SignatureAlgorithm.Ed25519);
  const builder = lib.Biscuit.builder();
  builder.addCode('check if time($t), $t >= 1970-01-01T00:00:00Z;');
  const token = builder.build(pair.getPrivateKey());
  const authorizer = new lib.AuthorizerBuilder();
  authorizer.addCode('time(2000-01-01T00:00:00Z); allow if true;');
  const built = authorizer.buildAuthenticated(token);
  // Compiling is the point, not the bound: a generous one, so a slow machine still warms up.
  built.authorizeWithLimits({ max_facts: 100, max_iterations: 10, max_time_micro: 10_000_000 });
  built.free();
  token.free();
  pair.free();
}

/** The library, instantiated once per process. */
export function biscuitLib(): BiscuitLib {
  loaded ??= instantiate();
  return loaded;
}
