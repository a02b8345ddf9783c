/**
 * Token-2022 mint extensions the signer cannot account for. A simulation shows what a transfer moves, but some
 * extensions let value move later or elsewhere, out of any cap's sight: a transfer hook runs a program of the
 * mint's choosing on every transfer, a permanent delegate can take the key's tokens at any time, and confidential
 * transfers hide the amounts. A mint with one of these (or with an extension this list does not know) is refused.
 *
 * The extensions are a type-length-value list after the mint's base layout and its account type byte. The program
 * clients that decode Token-2022 extensions are built for an older @solana/kit than ours, so the walk is here;
 * it reads only the types.
 */
import type { MintState } from '../../solana/token-state';

const TLV_START = 166; // 165 bytes of base layout (the mint is padded to an account's size) + the account type

/** Extension types a mint may carry that change nothing the simulation's balances do not show. */
const ACCOUNTED: ReadonlyMap<number, string> = new Map([
  [1, 'transfer fee config'], // the sender's balance drops by the whole amount, as simulated; the fee is withheld
  [3, 'mint close authority'],
  [6, 'default account state'],
  [9, 'non-transferable'],
  [10, 'interest-bearing'],
  [18, 'metadata pointer'],
  [19, 'token metadata'],
  [20, 'group pointer'],
  [21, 'token group'],
  [22, 'group member pointer'],
  [23, 'token group member'],
  [25, 'scaled UI amount'],
  [26, 'pausable'],
]);

/** Extensions that let value move outside what a simulation shows, with the reason given to the agent. */
const REFUSED: ReadonlyMap<number, string> = new Map([
  [4, 'confidential transfers (amounts are encrypted, so no cap can count them)'],
  [12, 'a permanent delegate (it can move the key’s tokens at any time, outside any cap)'],
  [14, 'a transfer hook (a program of the mint’s choosing runs on every transfer)'],
  [16, 'confidential transfer fees (amounts are encrypted, so no cap can count them)'],
  [24, 'confidential mint and burn (amounts are encrypted, so no cap can count them)'],
]);

/** The extension types a Token-2022 mint carries, in order (none for SPL Token). */
function extensionTypes(mint: MintState): number[] {
  if (mint.program !== 'token-2022') return [];
  const data = mint.data;
  const types: number[] = [];
  let at = TLV_START;
  while (at + 4 <= data.length) {
    const type = (data[at] ?? 0) | ((data[at + 1] ?? 0) << 8);
    const length = (data[at + 2] ?? 0) | ((data[at + 3] ?? 0) << 8);
    if (type === 0) break; // uninitialised padding ends the list
    types.push(type);
    at += 4 + length;
  }
  return types;
}

/** Why the signer will not move this mint's tokens, or null when it can account for every extension. */
export function unaccountedExtension(mint: MintState): string | null {
  for (const type of extensionTypes(mint)) {
    const refused = REFUSED.get(type);
    if (refused !== undefined) return `the mint has ${refused}`;
    if (!ACCOUNTED.has(type))
      return `the mint has Token-2022 extension type ${type}, which the signer cannot account for`;
  }
  return null;
}

/**
 * Extensions whose UI amount is not the base amount shifted by the decimals: a wallet shows it scaled by a
 * multiplier or grown by interest over time. The caps work in base units either way; only what people read differs.
 */
const UI_SCALED: ReadonlyMap<number, string> = new Map([
  [10, 'interest-bearing'],
  [25, 'scaled UI amount'],
]);

/** The extension that makes the mint's UI amount differ from base units ÷ 10^decimals, or null. */
export function uiScaling(mint: MintState | null): string | null {
  if (mint === null) return null;
  for (const type of extensionTypes(mint)) {
    const name = UI_SCALED.get(type);
    if (name !== undefined) return name;
  }
  return null;
}

/**
 * The decimals UI amounts of this mint are shown with, or null when they cannot be shown exactly from the decimals
 * (a scaled or interest-bearing mint): amounts are then shown in base units only, never as a wrong UI figure.
 */
export function uiDecimals(mint: MintState | null | undefined): number | null {
  if (mint === null || mint === undefined) return null;
  return uiScaling(mint) === null ? mint.decimals : null;
}
