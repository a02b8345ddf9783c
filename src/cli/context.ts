/**
 * What every operator command needs: where output goes, which config, and the ledger, engine and chain opened on
 * it and closed again. stdout carries only results; guidance and progress go to stderr.
 */
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../config/load';
import type { KeyConfig, SignerConfig } from '../config/types';
import { chainClientFor } from '../rpc/for-cluster';
import type { JsonRpcClient } from '../rpc/rpc-client';
import { openLedger } from '../ledger/open';
import type { Ledger } from '../ledger/types';
import { openEngine } from '../signer';
import type { SignerEngine } from '../signer/types';
import { SignerError, isSignerError } from '../util/errors';
import { didYouMean } from '../util/did-you-mean';
import { terminalSafeJson } from '../util/untrusted';
import { option, type ParsedArgs } from './args';

export const out = (text: string): void => {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
};
export const err = (text: string): void => {
  process.stderr.write(text.endsWith('\n') ? text : `${text}\n`);
};
/** JSON on stdout, with every character a terminal could act on escaped (the value is unchanged). */
export const outJson = (value: unknown, indent = 2): void => {
  out(terminalSafeJson(value, indent));
};

export function configPath(args: ParsedArgs): string | undefined {
  const given = option(args, 'config') ?? process.env.SIGNER_CONFIG;
  if (given !== undefined && given !== '') return given;
  const local = path.resolve('var/local/config.yaml');
  return fs.existsSync(local) ? local : undefined;
}

export function config(args: ParsedArgs): SignerConfig {
  const file = configPath(args);
  if (file === undefined)
    throw new SignerError(
      'config_invalid',
      'no config: pass --config FILE, set SIGNER_CONFIG, or run `npm start` once to create var/local/config.yaml',
    );
  return loadConfig({ file, env: process.env });
}

export function keyOf(cfg: SignerConfig, name: string): KeyConfig {
  const key = cfg.keys.find((k) => k.name === name);
  if (!key) {
    const names = cfg.keys.map((k) => k.name);
    throw new SignerError(
      'key_unknown',
      `no key ${JSON.stringify(name)} in the config${didYouMean(name, names, (n) => JSON.stringify(n))}; sa-forge-signer key list shows them`,
    );
  }
  return key;
}

export function rpcFor(cfg: SignerConfig): JsonRpcClient {
  return chainClientFor(cfg.cluster, cfg.timings);
}

/** Where to look when the chain does not answer: the embedded chain lives inside the running service. */
export function chainHint(cfg: SignerConfig): string {
  if (cfg.cluster.name === 'local')
    return (
      `the embedded chain at ${cfg.cluster.rpc_url} runs inside the service: start it in another terminal with ` +
      '`npm start` (or `sa-forge-signer-serve --local`) and try again, or run the chain alone with `sa-forge-signer localnet`'
    );
  return `check that the cluster's RPC endpoint ${cfg.cluster.rpc_url} (rpc_url, SIGNER_RPC_URL) is reachable`;
}

/** An RPC failure rethrown with what the operator can do about it; anything else unchanged. */
export function withChainHint(cfg: SignerConfig, e: unknown): unknown {
  if (isSignerError(e) && e.code === 'rpc')
    return new SignerError('rpc', `${e.message}; ${chainHint(cfg)}`, { cause: e });
  return e;
}

export async function withLedger<T>(cfg: SignerConfig, fn: (ledger: Ledger) => Promise<T>): Promise<T> {
  const ledger = await openLedger(cfg.ledger);
  try {
    return await fn(ledger);
  } finally {
    await ledger.close();
  }
}

export async function withEngine<T>(cfg: SignerConfig, fn: (engine: SignerEngine) => Promise<T>): Promise<T> {
  let engine: SignerEngine;
  try {
    engine = await openEngine(cfg);
  } catch (e) {
    throw withChainHint(cfg, e);
  }
  try {
    return await fn(engine).catch((e: unknown) => {
      throw withChainHint(cfg, e);
    });
  } finally {
    await engine.close();
  }
}

/** One line typed by the operator (or piped in); the empty string at end of input. */
export function readLine(prompt: string): Promise<string> {
  process.stderr.write(prompt);
  return new Promise((resolve) => {
    let text = '';
    const onData = (d: Buffer): void => {
      text += d.toString('utf8');
      const nl = text.indexOf('\n');
      if (nl >= 0) finish(text.slice(0, nl));
    };
    const onEnd = (): void => {
      finish(text);
    };
    const finish = (line: string): void => {
      process.stdin.off('data', onData);
      process.stdin.off('end', onEnd);
      process.stdin.pause();
      resolve(line.replace(/\r$/, ''));
    };
    process.stdin.on('data', onData);
    process.stdin.on('end', onEnd);
    process.stdin.resume();
  });
}
