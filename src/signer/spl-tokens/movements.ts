/**
 * What a transaction does to token accounts, read from the state before (pinned to the simulation's slot) and
 * after (the simulation) of every writable account. Whichever program moved the tokens — the token program called
 * directly, a swap, any CPI — the balances show it, so the policy judges the movement, not the instructions.
 *
 * The key spends from the token accounts whose owner field is the key, and from those whose delegate it was
 * before the transaction (a treasury, docs/treasury.md): a delegate transfer moves tokens the key controls, so it
 * counts against the key's caps exactly as a spend of its own does. Authority changes are judged only on the
 * key's own accounts: a delegate cannot change an account's authorities.
 */
import type { AccountData } from '../../rpc/types';
import type { TokenOp } from '../../config/types';
import { readMint, readTokenAccount, type TokenAccountState, type TokenProgramName } from '../../solana/token-state';

export interface MintMovement {
  mint: string;
  program: TokenProgramName;
  /** The key's accounts of this mint together: negative is a spend. */
  keyChange: bigint;
  /** What each other owner's accounts of this mint gain, by owner, in first-seen order. */
  credits: Map<string, bigint>;
  /** The part of keyChange made in accounts the key is the delegate of, by account (absent: none). */
  delegated?: Map<string, bigint>;
}

/** An operation on the key's token authority that a key must allow explicitly (docs/policy.md). */
export interface AuthorityChange {
  op: TokenOp;
  account: string;
  what: string;
}

export interface TokenMovements {
  mints: MintMovement[];
  authority: AuthorityChange[];
}

/** A token account as it was before the transaction created it: empty, owned by whoever owns it afterwards. */
const unborn = (after: TokenAccountState): TokenAccountState => ({
  ...after,
  amount: 0n,
  delegate: null,
  delegatedAmount: 0n,
  closeAuthority: null,
  frozen: false,
});

export function tokenMovements(
  keyPubkey: string,
  addresses: readonly string[],
  before: readonly (AccountData | null)[],
  after: readonly (AccountData | null)[],
): TokenMovements {
  const byMint = new Map<string, MintMovement>();
  const authority: AuthorityChange[] = [];
  const movement = (t: TokenAccountState): MintMovement => {
    const found = byMint.get(t.mint);
    if (found) return found;
    const created: MintMovement = { mint: t.mint, program: t.program, keyChange: 0n, credits: new Map() };
    byMint.set(t.mint, created);
    return created;
  };

  for (const [i, address] of addresses.entries()) {
    const preAccount = before[i] ?? null;
    const postAccount = after[i] ?? null;
    const pre = readTokenAccount(preAccount);
    const post = readTokenAccount(postAccount);
    if (pre === null && post === null) {
      mintAuthorityChanges(keyPubkey, address, preAccount, postAccount, authority);
      continue;
    }
    const was = pre ?? unborn(post as TokenAccountState);
    const now = post;
    const m = movement(was);
    const delta = (now?.amount ?? 0n) - was.amount;
    if (was.owner === keyPubkey) {
      m.keyChange += delta;
      accountAuthorityChanges(address, was, now, authority);
    } else if (was.delegate === keyPubkey) {
      m.keyChange += delta;
      if (delta !== 0n) {
        m.delegated ??= new Map();
        m.delegated.set(address, (m.delegated.get(address) ?? 0n) + delta);
      }
    } else if (delta > 0n) {
      m.credits.set(was.owner, (m.credits.get(was.owner) ?? 0n) + delta);
    }
    if (now && now.frozen !== was.frozen) {
      authority.push({
        op: 'freeze',
        account: address,
        what: `${now.frozen ? 'freezes' : 'thaws'} token account ${address}`,
      });
    }
  }
  const mints = [...byMint.values()].filter((m) => m.keyChange !== 0n || m.credits.size > 0);
  return { mints, authority };
}

/** Changes to one of the key's token accounts that hand control of it (or its balance) to someone else. */
function accountAuthorityChanges(
  address: string,
  was: TokenAccountState,
  now: TokenAccountState | null,
  out: AuthorityChange[],
): void {
  if (now === null) {
    if (was.amount > 0n) {
      out.push({
        op: 'close_account',
        account: address,
        what: `closes token account ${address} holding ${was.amount}`,
      });
    }
    return;
  }
  if (now.owner !== was.owner) {
    out.push({ op: 'set_authority', account: address, what: `gives token account ${address} to ${now.owner}` });
  }
  if (now.closeAuthority !== was.closeAuthority) {
    out.push({
      op: 'set_authority',
      account: address,
      what: `changes the close authority of token account ${address}`,
    });
  }
  if (now.delegate !== null && (now.delegate !== was.delegate || now.delegatedAmount > was.delegatedAmount)) {
    out.push({
      op: 'approve',
      account: address,
      what: `lets ${now.delegate} spend ${now.delegatedAmount} from token account ${address}`,
    });
  }
}

/** Changes to a mint whose authority is the key: new supply, or its authorities handed on. */
function mintAuthorityChanges(
  keyPubkey: string,
  address: string,
  preAccount: AccountData | null,
  postAccount: AccountData | null,
  out: AuthorityChange[],
): void {
  const pre = readMint(preAccount);
  if (pre === null || (pre.mintAuthority !== keyPubkey && pre.freezeAuthority !== keyPubkey)) return;
  const post = readMint(postAccount);
  if (post === null) return;
  if (post.supply > pre.supply) {
    out.push({ op: 'mint', account: address, what: `mints ${post.supply - pre.supply} new tokens of ${address}` });
  }
  if (post.mintAuthority !== pre.mintAuthority || post.freezeAuthority !== pre.freezeAuthority) {
    out.push({ op: 'set_authority', account: address, what: `changes the authorities of mint ${address}` });
  }
}
