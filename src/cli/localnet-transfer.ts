/**
 * `sa-forge-signer localnet transfer --key KEY --zink AMOUNT [--to ADDRESS] [--out FILE]`: an unsigned payload
 * moving AMOUNT from a configured key to ADDRESS (by default the key's first allowed destination), so a key's caps
 * can be tried with `check` and `sign` on the embedded default without writing a client. It reads no chain and
 * writes nothing but FILE: `sa-forge-signer sign FILE` signs it (a fresh blockhash on every sign).
 */
import fs from 'node:fs';
import type { SignerConfig } from '../config/types';
import { parseZinkAmount, transferPayload } from '../signer/transfer';
import { decodeAddress } from '../util/base58';
import { SignerError } from '../util/errors';
import { parseArgs } from './args';
import { ownOptionsOf, usageOf } from './commands';
import { err, keyOf, out } from './context';

/** The usage line and the options are the command table's (commands.ts). */
const USAGE = usageOf('localnet transfer');

export function localnetTransfer(cfg: SignerConfig, argv: readonly string[]): number {
  const args = parseArgs(argv, ownOptionsOf('localnet transfer'));
  const opt = (name: string): string | undefined => args.options.get(name) as string | undefined;
  const keyName = opt('key');
  const zink = opt('zink');
  if (keyName === undefined || zink === undefined || args.positional.length > 0)
    throw new SignerError('request_invalid', USAGE);
  const key = keyOf(cfg, keyName);
  const to = opt('to') ?? key.transfer_to[0];
  if (to === undefined)
    throw new SignerError(
      'request_invalid',
      `key ${key.name} has no allowed destination (transfer_to): pass --to ADDRESS, or add one to its transfer_to`,
    );
  if (!decodeAddress(to)) throw new SignerError('request_invalid', `--to ${JSON.stringify(to)} is not an address`);
  const lamports = parseZinkAmount(zink);
  const summary = `Send ${zink} ZINK (${lamports} lamports) from ${key.name} to ${to}`;
  const text = `${JSON.stringify(transferPayload({ from: key.pubkey, to, lamports, summary }), null, 2)}\n`;
  const file = opt('out');
  if (file === undefined) out(text);
  else {
    fs.writeFileSync(file, text);
    err(`${summary}: wrote ${file}; sign it with: sa-forge-signer sign ${file}`);
  }
  return 0;
}
