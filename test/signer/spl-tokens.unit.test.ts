/**
 * The token policy's pure parts: amounts in base and UI units, Token-2022 extensions the signer refuses, and
 * what a pair of before/after account states says the transaction did — whichever program did it.
 */
import { address, none, some } from '@solana/kit';
import { AccountState, getMintEncoder, getTokenEncoder } from '@solana-program/token';
import type { AccountData } from '../../src/rpc/types';
import { SPL_TOKEN_PROGRAM, TOKEN_2022_PROGRAM } from '../../src/solana/programs';
import { parseBaseUnits, uiAmount } from '../../src/util/token-amounts';
import { unaccountedExtension } from '../../src/signer/spl-tokens/extensions';
import { tokenMovements } from '../../src/signer/spl-tokens/movements';
import { readMint } from '../../src/solana/token-state';
import { randomAddress } from '../support/payloads';

const KEY = randomAddress();
const POOL = randomAddress();
const USDC = randomAddress();
const OTHER = randomAddress();

function tokenAccount(
  mint: string,
  owner: string,
  amount: bigint,
  over: { delegate?: string; delegatedAmount?: bigint; frozen?: boolean } = {},
): AccountData {
  const data = getTokenEncoder().encode({
    mint: address(mint),
    owner: address(owner),
    amount,
    delegate: over.delegate ? some(address(over.delegate)) : none(),
    state: over.frozen ? AccountState.Frozen : AccountState.Initialized,
    isNative: none(),
    delegatedAmount: over.delegatedAmount ?? 0n,
    closeAuthority: none(),
  });
  return { lamports: 2_039_280, owner: SPL_TOKEN_PROGRAM, data: new Uint8Array(data) };
}

function mintAccount(supply: bigint, authority: string | null, tlv: number[] | null = null): AccountData {
  const base = getMintEncoder().encode({
    mintAuthority: authority ? some(address(authority)) : none(),
    supply,
    decimals: 6,
    isInitialized: true,
    freezeAuthority: none(),
  });
  const data = tlv ? Uint8Array.from([...base, ...new Uint8Array(165 - base.length), 1, ...tlv]) : new Uint8Array(base);
  return { lamports: 1_461_600, owner: tlv ? TOKEN_2022_PROGRAM : SPL_TOKEN_PROGRAM, data };
}

describe('amounts', () => {
  it.each([
    [1_234_567n, 6, '1.234567'],
    [1_000_000n, 6, '1'],
    [5n, 6, '0.000005'],
    [-2_500_000n, 6, '-2.5'],
    [42n, 0, '42'],
  ])('%s base units with %s decimals read %s', (base, decimals, ui) => {
    expect(uiAmount(base, decimals)).toBe(ui);
  });

  it('parses whole base units up to u64 max, as numbers or strings, and nothing else', () => {
    expect(parseBaseUnits('18446744073709551615')).toBe(18_446_744_073_709_551_615n);
    expect(parseBaseUnits(5_000_000)).toBe(5_000_000n);
    for (const bad of ['18446744073709551616', '012', '-1', '1.5', 1.5, -1, '', 'ten', null]) {
      expect(parseBaseUnits(bad)).toBeNull();
    }
  });
});

describe('Token-2022 extensions', () => {
  const tlv = (type: number, length: number) => [
    type & 0xff,
    type >> 8,
    length & 0xff,
    length >> 8,
    ...new Array<number>(length).fill(0),
  ];

  it('accounts for transfer fees and metadata pointers; refuses a permanent delegate, confidential transfers and unknown types', () => {
    expect(unaccountedExtension(readMint(mintAccount(1n, null, [...tlv(1, 108), ...tlv(18, 64)]))!)).toBeNull();
    expect(unaccountedExtension(readMint(mintAccount(1n, null, tlv(12, 32)))!)).toBe(
      'the mint has a permanent delegate (it can move the key’s tokens at any time, outside any cap)',
    );
    expect(unaccountedExtension(readMint(mintAccount(1n, null, tlv(4, 65)))!)).toContain('confidential transfers');
    expect(unaccountedExtension(readMint(mintAccount(1n, null, tlv(99, 4)))!)).toBe(
      'the mint has Token-2022 extension type 99, which the signer cannot account for',
    );
    expect(unaccountedExtension(readMint(mintAccount(1n, null))!)).toBeNull();
  });
});

describe('token movements from before and after states', () => {
  it('counts a swap made inside another program like a transfer: the key spends one mint and receives another', () => {
    const addresses = [randomAddress(), randomAddress(), randomAddress(), randomAddress()];
    const before = [
      tokenAccount(USDC, KEY, 10_000_000n),
      tokenAccount(USDC, POOL, 500n),
      tokenAccount(OTHER, KEY, 0n),
      tokenAccount(OTHER, POOL, 9_000n),
    ];
    const after = [
      tokenAccount(USDC, KEY, 4_000_000n),
      tokenAccount(USDC, POOL, 6_000_500n),
      tokenAccount(OTHER, KEY, 7_000n),
      tokenAccount(OTHER, POOL, 2_000n),
    ];
    const moved = tokenMovements(KEY, addresses, before, after);
    expect(moved.authority).toEqual([]);
    expect(moved.mints).toEqual([
      { mint: USDC, program: 'spl-token', keyChange: -6_000_000n, credits: new Map([[POOL, 6_000_000n]]) },
      { mint: OTHER, program: 'spl-token', keyChange: 7_000n, credits: new Map() },
    ]);
  });

  it('sees a delegate, a new owner, a close with a balance and a freeze in the states, whatever instruction did it', () => {
    const [a, b, c, d] = [randomAddress(), randomAddress(), randomAddress(), randomAddress()];
    const moved = tokenMovements(
      KEY,
      [a, b, c, d],
      [
        tokenAccount(USDC, KEY, 5n),
        tokenAccount(USDC, KEY, 5n),
        tokenAccount(USDC, KEY, 5n),
        tokenAccount(USDC, POOL, 1n),
      ],
      [
        tokenAccount(USDC, KEY, 5n, { delegate: POOL, delegatedAmount: 5n }),
        tokenAccount(USDC, POOL, 5n),
        null,
        tokenAccount(USDC, POOL, 1n, { frozen: true }),
      ],
    );
    expect(moved.authority.map((x) => [x.op, x.account])).toEqual([
      ['approve', a],
      ['set_authority', b],
      ['close_account', c],
      ['freeze', d],
    ]);
  });

  it('sees new supply of a mint whose authority is the key', () => {
    const mint = randomAddress();
    const moved = tokenMovements(KEY, [mint], [mintAccount(100n, KEY)], [mintAccount(150n, KEY)]);
    expect(moved.authority).toEqual([{ op: 'mint', account: mint, what: `mints 50 new tokens of ${mint}` }]);
  });
});
