/**
 * Our base58 against kit's codec, the reference: the same text for any bytes, the same bytes for any text kit reads,
 * and null wherever kit refuses the text (docs/decisions.md, "Base58").
 */
import fc from 'fast-check';
import { getBase58Decoder, getBase58Encoder } from '@solana/kit';
import { decodeAddress, decodeBase58, encodeBase58 } from '../../src/util/base58';

const kitText = getBase58Decoder();
const kitBytes = getBase58Encoder();

function kitRead(text: string): Uint8Array | null {
  try {
    return Uint8Array.from(kitBytes.encode(text));
  } catch {
    return null;
  }
}

// bytes with leading zeros as often as not: they are base58's one special case ('1' each)
const bytes = fc
  .tuple(fc.nat({ max: 4 }), fc.uint8Array({ maxLength: 80 }))
  .map(([zeros, rest]) => Uint8Array.from([...new Array<number>(zeros).fill(0), ...rest]));

describe('base58', () => {
  it('writes any bytes as kit does, and reads its own text back', () => {
    fc.assert(
      fc.property(bytes, (b) => {
        const text = encodeBase58(b);
        expect(text).toBe(kitText.decode(b));
        expect(decodeBase58(text)).toEqual(b);
      }),
      { numRuns: 2000 },
    );
  });

  it('reads any text as kit does: the same bytes, or null where kit refuses it', () => {
    const alphabetOrNot = fc.string({
      unit: fc.constantFrom(...Array.from('123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz0OIl+/= é')),
      maxLength: 60,
    });
    fc.assert(
      fc.property(alphabetOrNot, (text) => {
        expect(decodeBase58(text)).toEqual(kitRead(text));
      }),
      { numRuns: 2000 },
    );
  });

  it('an address is 32 bytes, else null', () => {
    const key = new Uint8Array(32).fill(7);
    expect(decodeAddress(encodeBase58(key))).toEqual(key);
    expect(decodeAddress(encodeBase58(new Uint8Array(31).fill(7)))).toBeNull();
    expect(decodeAddress('0'.repeat(44))).toBeNull();
    expect(decodeAddress('1'.repeat(45))).toBeNull();
  });
});
