import { getCompiledTransactionMessageDecoder, getTransactionDecoder } from '@solana/kit';
import { compileLegacyMessage, serializeTransaction } from '../../src/signer/compile';
import { parsePayloadV1 as parsePayload } from '../../src/signer/payload';
import { signerFromKeypairBytes } from '../../src/keys/keypair';
import { verifySignature } from '../../src/keys/keypair';
import { decodeBase58, encodeBase58 } from '../../src/util/base58';
import { keypair, payload, randomAddress, transferInstruction } from '../support/payloads';

describe('legacy message compile', () => {
  it('produces a message @solana/kit decodes to the same accounts, header and instructions', () => {
    const payer = keypair();
    const partial = keypair();
    const dest = randomAddress();
    const program = randomAddress();
    const p = parsePayload(
      payload(payer.pubkey, [
        transferInstruction(payer.pubkey, dest, 5000),
        {
          program_id: program,
          accounts: [
            { pubkey: partial.pubkey, is_signer: true, is_writable: false },
            { pubkey: dest, is_signer: false, is_writable: false },
          ],
          data: [1, 2, 3],
        },
      ]),
    );
    const blockhash = randomAddress();
    const msg = compileLegacyMessage(p.feePayer, p.instructions, blockhash);
    const [decoded, end] = getCompiledTransactionMessageDecoder().read(msg.bytes, 0);
    expect(end).toBe(msg.bytes.length);
    if (decoded.version !== 'legacy') throw new Error('expected a legacy message');
    expect(decoded.staticAccounts).toEqual(msg.accountKeys);
    expect(decoded.lifetimeToken).toBe(blockhash);
    expect(decoded.header).toEqual({
      numSignerAccounts: 2,
      numReadonlySignerAccounts: 1,
      numReadonlyNonSignerAccounts: 2,
    });
    expect(msg.accountKeys[0]).toBe(payer.pubkey);
    expect(msg.accountKeys[1]).toBe(partial.pubkey); // read-only signer after the writable payer
    expect(msg.accountKeys[2]).toBe(dest); // writable non-signer
    expect(decoded.instructions.map((i) => [...(i.data ?? [])])).toEqual([[...p.instructions[0]!.data], [1, 2, 3]]);
  });

  it('serialises a signed transaction kit parses, with valid signatures in signer order', () => {
    const payer = keypair();
    const p = parsePayload(payload(payer.pubkey, [transferInstruction(payer.pubkey, randomAddress(), 1)]));
    const msg = compileLegacyMessage(p.feePayer, p.instructions, randomAddress());
    const signer = signerFromKeypairBytes(payer.bytes)!;
    const wire = serializeTransaction(msg, new Map([[payer.pubkey, signer.sign(msg.bytes)]]));
    const tx = getTransactionDecoder().decode(wire);
    const sig = tx.signatures[payer.pubkey as keyof typeof tx.signatures]!;
    expect(verifySignature(decodeBase58(payer.pubkey)!, msg.bytes, sig as Uint8Array)).toBe(true);
    expect(Buffer.from(tx.messageBytes as unknown as Uint8Array)).toEqual(Buffer.from(msg.bytes));
  });

  it('refuses a transaction larger than a packet', () => {
    const payer = keypair();
    // Built directly: the payload parser already refuses data this large, the compiler must refuse it on its own.
    const big = { programId: randomAddress(), accounts: [], data: new Uint8Array(1300).fill(7) };
    const msg = compileLegacyMessage(payer.pubkey, [big], encodeBase58(new Uint8Array(32).fill(1)));
    expect(() => serializeTransaction(msg, new Map())).toThrow(/must fit in 1232 bytes/);
  });
});
