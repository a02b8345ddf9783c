/**
 * `sa-forge-signer localnet mint [--key KEY] [--decimals N] [--amount UNITS] [--per-tx UNITS] [--per-day UNITS]`:
 * on the embedded chain of a running `npm start`, a new SPL token mint whose authority is a throwaway key funded
 * by the chain's faucet; the key gets AMOUNT base units in its token account, and each of its `transfer_to`
 * destinations gets a token account, so the key can pay them. stdout is the policy to paste under `keys.KEY` in the
 * config (then `sa-forge-signer reload`); stderr says what was made. A development command: the transactions are
 * built with @solana/kit and the token and system program clients (the latter a development dependency).
 */
import {
  appendTransactionMessageInstructions,
  createSolanaRpc,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  address,
  type Address,
  type Instruction,
  type TransactionSigner,
} from '@solana/kit';
import {
  TOKEN_PROGRAM_ADDRESS,
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstructionAsync,
  getInitializeMint2Instruction,
  getMintSize,
  getMintToInstruction,
} from '@solana-program/token';
import YAML from 'yaml';
import type { SignerConfig } from '../config/types';
import { SignerError, errorMessage } from '../util/errors';
import { parseArgs } from './args';
import { ownOptionsOf, usageOf } from './commands';
import { chainHint, err, keyOf, out } from './context';

/** The usage line and the options are the command table's (commands.ts). */
const USAGE = usageOf('localnet mint');

/** The faucet's gift to the throwaway mint authority: rent for the mint and the token accounts, and the fees. */
const AUTHORITY_LAMPORTS = 1_000_000_000n;
const WAIT_MS = 20_000;
const POLL_MS = 25;

/** A number when it is exact as one, else a decimal string (the config reads both). */
const yamlUnits = (v: bigint): number | string => (v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString());

type Rpc = ReturnType<typeof createSolanaRpc>;

function units(value: string | undefined, fallback: bigint, name: string): bigint {
  if (value === undefined) return fallback;
  if (!/^\d{1,20}$/.test(value))
    throw new SignerError('request_invalid', `--${name} takes base units (digits), not ${value}`);
  return BigInt(value);
}

async function waitUntil(what: string, done: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (Date.now() < deadline) {
    if (await done()) return;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  throw new SignerError('rpc', `${what} did not happen within ${String(WAIT_MS / 1000)} s`);
}

async function send(rpc: Rpc, payer: TransactionSigner, instructions: Instruction[]): Promise<string> {
  const { value: latest } = await rpc.getLatestBlockhash({ commitment: 'confirmed' }).send();
  const tx = await signTransactionMessageWithSigners(
    pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(payer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(latest, m),
      (m) => appendTransactionMessageInstructions(instructions, m),
    ),
  );
  const signature = getSignatureFromTransaction(tx);
  await rpc.sendTransaction(getBase64EncodedWireTransaction(tx), { encoding: 'base64' }).send();
  await waitUntil(`the mint's transaction ${signature} confirming`, async () => {
    const status = (await rpc.getSignatureStatuses([signature]).send()).value[0];
    if (status?.err)
      throw new SignerError('rpc', `the mint's transaction ${signature} failed: ${JSON.stringify(status.err)}`);
    return status?.confirmationStatus === 'confirmed' || status?.confirmationStatus === 'finalized';
  });
  return signature;
}

export async function localnetMint(cfg: SignerConfig, argv: readonly string[]): Promise<number> {
  const args = parseArgs(argv, ownOptionsOf('localnet mint'));
  if (args.positional.length > 0) throw new SignerError('request_invalid', USAGE);
  if (cfg.cluster.name !== 'local')
    throw new SignerError(
      'request_invalid',
      `localnet mint works on the embedded chain only; this config's cluster is ${cfg.cluster.name}`,
    );
  const key = keyOf(cfg, (args.options.get('key') as string | undefined) ?? 'demo');
  const decimals = Number(units(args.options.get('decimals') as string | undefined, 6n, 'decimals'));
  if (decimals > 9) throw new SignerError('request_invalid', '--decimals is at most 9');
  const amount = units(args.options.get('amount') as string | undefined, 10n ** BigInt(decimals), 'amount');
  const perTx = units(args.options.get('per-tx') as string | undefined, 50_000n, 'per-tx');
  const perDay = units(args.options.get('per-day') as string | undefined, 100_000n, 'per-day');
  // The system program's client is a development dependency, like the embedded chain this command serves.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { getCreateAccountInstruction } = require('@solana-program/system') as typeof import('@solana-program/system');

  const rpc = createSolanaRpc(cfg.cluster.rpc_url);
  const authority = await generateKeyPairSigner();
  const mint = await generateKeyPairSigner();
  try {
    await rpc.requestAirdrop(authority.address, lamports(AUTHORITY_LAMPORTS)).send();
    await waitUntil('the faucet funding the mint authority', async () => {
      const { value } = await rpc.getBalance(authority.address, { commitment: 'confirmed' }).send();
      return value > 0n;
    });
    const space = getMintSize();
    const rent = await rpc.getMinimumBalanceForRentExemption(BigInt(space)).send();
    const owner = address(key.pubkey);
    const [keyAccount] = await findAssociatedTokenPda({
      owner,
      mint: mint.address,
      tokenProgram: TOKEN_PROGRAM_ADDRESS,
    });
    const holders: Address[] = [owner, ...key.transfer_to.map((d) => address(d))];
    const accounts = await Promise.all(
      holders.map((h) =>
        getCreateAssociatedTokenIdempotentInstructionAsync({ payer: authority, owner: h, mint: mint.address }),
      ),
    );
    await send(rpc, authority, [
      getCreateAccountInstruction({
        payer: authority,
        newAccount: mint,
        lamports: rent,
        space,
        programAddress: TOKEN_PROGRAM_ADDRESS,
      }),
      getInitializeMint2Instruction({ mint: mint.address, decimals, mintAuthority: authority.address }),
      ...accounts,
      getMintToInstruction({ mint: mint.address, token: keyAccount, mintAuthority: authority, amount }),
    ]);
    err(
      `mint ${mint.address} (${String(decimals)} decimals) on the embedded chain at ${cfg.cluster.rpc_url}: key "${key.name}" holds ${amount.toString()} base units in ${keyAccount}` +
        (key.transfer_to.length > 0 ? `; token accounts made for its destinations ${key.transfer_to.join(', ')}` : ''),
    );
    err(`add the lines below under keys.${key.name} in ${cfg.source ?? 'the config'}, then: sa-forge-signer reload`);
  } catch (e) {
    if (e instanceof SignerError) throw e;
    throw new SignerError('rpc', `localnet mint failed: ${errorMessage(e)}; ${chainHint(cfg)}`, { cause: e });
  }
  const policy = {
    tokens: [
      {
        mint: mint.address,
        program: 'spl-token',
        per_tx: yamlUnits(perTx),
        per_day: yamlUnits(perDay),
        destinations: key.transfer_to.length > 0 ? [...key.transfer_to] : null,
      },
    ],
  };
  out(YAML.stringify(policy));
  return 0;
}
