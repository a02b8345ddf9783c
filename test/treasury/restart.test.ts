/**
 * The reconciliation's baseline outlives the process (docs/treasury.md): a spend made with the stolen agent key while
 * no signer runs (the service stopped, its ledger closed) is found by the first pass after the restart, and the
 * signer's own spends on either side of a restart are counted as its own, one still in flight at the baseline's
 * chain position (signed, sent only while the service is down) included. Run on both stores: the baseline is a row
 * of the ledger, and the spends since it are found by chain position.
 */
import fs from 'node:fs';
import { address, createKeyPairSignerFromBytes, createSolanaRpc, type KeyPairSigner } from '@solana/kit';
import { getTransferCheckedInstruction } from '@solana-program/token';
import type { LedgerConfig } from '../../src/config/types';
import { keyFilePath } from '../../src/keys/keyfile';
import { treasuryTransferPayload } from '../../src/treasury/transfer-payload';
import { createDatabase, dbUrl, dropDatabase } from '../ledger/pg';
import { sendSigned, waitConfirmed } from '../signer/kit-transactions';
import { tokenPolicy } from '../signer/policy/fixtures';
import { randomAddress } from '../support/payloads';
import { setMint, setTokenAccount } from '../support/tokens';
import { rpcResult } from '../support/rpc';
import { makeWorld, type World } from '../support/world';

const M = 1_000_000n;

/** The ledger a world is given (none: the world's own SQLite file) and how to remove it after. */
interface StoreSetup {
  ledger?: LedgerConfig;
  drop: () => Promise<void>;
}

const sqlite = (): Promise<StoreSetup> => Promise.resolve({ drop: () => Promise.resolve() });

async function postgres(): Promise<StoreSetup> {
  const name = await createDatabase();
  return { ledger: { store: 'postgres', url: dbUrl(name), pool_size: 4 }, drop: () => dropDatabase(name) };
}

describe.each([
  ['SQLite', sqlite],
  ['PostgreSQL', postgres],
])('treasury reconciliation across a restart (%s ledger)', (_store, store) => {
  const MINT = randomAddress();
  const OWNER = randomAddress();
  let w: World;
  let drop: () => Promise<void>;
  let treasury: string;
  let merchant: string;

  const agent = () => w.config.keys.find((k) => k.name === 'agent')!;
  const verdicts = async () => (await w.engine.reconcileTreasuries())[0]?.verdicts;

  /** The agent key as an intruder holds it: read from the key file, used on the chain without the signer. */
  async function stolenKey(): Promise<KeyPairSigner> {
    const bytes = JSON.parse(fs.readFileSync(keyFilePath(w.config.key_dir, 'agent'), 'utf8')) as number[];
    return createKeyPairSignerFromBytes(Uint8Array.from(bytes));
  }

  /** A TransferChecked from the treasury signed by the stolen key as delegate, sent straight to the chain. */
  async function foreignSpend(amount: bigint): Promise<void> {
    const rpc = createSolanaRpc(w.localnet.url);
    const thief = await stolenKey();
    await sendSigned(rpc, thief, [
      getTransferCheckedInstruction({
        source: address(treasury),
        mint: address(MINT),
        destination: address(merchant),
        authority: thief,
        amount,
        decimals: 6,
      }),
    ]);
  }

  const payFromTreasury = (amount: bigint) =>
    treasuryTransferPayload({
      key: agent(),
      account: treasury,
      mint: MINT,
      destination: merchant,
      amount,
      decimals: 6,
      program: 'spl-token',
      summary: `pay ${amount} from the treasury`,
    });

  /** The signer's own spend from the treasury, as the key's delegate. */
  async function ownSpend(amount: bigint): Promise<void> {
    const r = await w.engine.sign({ payload: payFromTreasury(amount), principal: w.operator });
    expect(r).toMatchObject({ outcome: 'confirmed' });
  }

  beforeAll(async () => {
    const s = await store();
    drop = s.drop;
    w = await makeWorld({
      keys: { agent: { tokens: [tokenPolicy(MINT, { per_tx: 3n * M, per_day: 10n * M })] } },
      ...(s.ledger === undefined ? {} : { ledger: s.ledger }),
    });
    setMint(w.localnet, MINT, { decimals: 6 });
    treasury = setTokenAccount(w.localnet, {
      mint: MINT,
      owner: OWNER,
      amount: 100n * M,
      delegate: agent().pubkey,
      delegatedAmount: 8n * M,
    });
    merchant = setTokenAccount(w.localnet, { mint: MINT, owner: randomAddress(), amount: 0n });
    agent().treasury = { owner: OWNER, accounts: [treasury], refill_below_percent: 50 };
    w.localnet.airdrop(agent().pubkey, 1_000_000_000);
  });
  afterAll(async () => {
    await w.close();
    await drop();
  });

  it('a spend made while the service was stopped is a mismatch at the first pass after the restart', async () => {
    expect(await verdicts()).toEqual([{ kind: 'first_seen', account: treasury, delegatedAmount: 8n * M }]);
    await w.restart(() => foreignSpend(1n * M));
    expect(await verdicts()).toEqual([
      { kind: 'mismatch', account: treasury, mint: MINT, expected: 8n * M, actual: 7n * M },
    ]);
    expect(await w.ledger.getHalt('agent')).toMatchObject({ by: 'signer (treasury reconciliation)' });
  });

  it('the signer’s own spends before and after a restart are its own; a foreign one beside them still shows', async () => {
    await w.engine.resume('agent', 'operator:test');
    // The mismatch pass moved the baseline to what it read (7): the spend it found is not found again.
    await ownSpend(1n * M); // 6 left
    await w.restart();
    await ownSpend(2n * M); // 4 left
    expect(await verdicts()).toEqual([{ kind: 'ok', account: treasury, delegatedAmount: 4n * M }]);
    expect(await w.ledger.getHalt('agent')).toBeNull();

    // Own spends on both sides of a restart, and 1 token more spent by the thief while the service was down.
    await ownSpend(1n * M); // 3 left
    await w.restart(() => foreignSpend(1n * M)); // 2 left
    await ownSpend(1n * M); // 1 left
    expect(await verdicts()).toEqual([
      { kind: 'mismatch', account: treasury, mint: MINT, expected: 2n * M, actual: 1n * M },
    ]);
  });

  it('an intent still in flight at the baseline’s chain position, landing while the service is stopped, is the signer’s', async () => {
    await w.engine.resume('agent', 'operator:test');
    // The owner approves a new allowance (a refill: higher, so not a spend).
    setTokenAccount(w.localnet, {
      mint: MINT,
      owner: OWNER,
      amount: 90n * M,
      delegate: agent().pubkey,
      delegatedAmount: 5n * M,
      address: treasury,
    });
    // Signed, not sent: its intent is in the ledger with no final entry when the next pass stores its baseline.
    const r = await w.engine.sign({ payload: payFromTreasury(1n * M), mode: 'sign_only', principal: w.operator });
    expect(r.outcome).toBe('signed');
    expect(await verdicts()).toEqual([{ kind: 'ok', account: treasury, delegatedAmount: 5n * M }]);
    await w.restart(async () => {
      const rpc = createSolanaRpc(w.localnet.url);
      await rpcResult(w.localnet.url, 'sendTransaction', [r.signed_transaction, { encoding: 'base64' }]);
      await waitConfirmed(rpc, r.signature as Parameters<typeof waitConfirmed>[1]);
    });
    expect(await verdicts()).toEqual([{ kind: 'ok', account: treasury, delegatedAmount: 4n * M }]);
    expect(await w.ledger.getHalt('agent')).toBeNull();
  });
});
