import { compileLegacyMessage } from '../../src/signer/compile';
import { parsePayloadV1 as parsePayload } from '../../src/signer/payload';
import { checkedMessage } from '../../src/signer/wire/checked-message';
import { compileV1Transaction } from '../../src/signer/wire/compile-v1';
import { resolveAccounts } from '../../src/signer/wire/lookup-tables';
import { keypair, payload, randomAddress, transferInstruction } from '../support/payloads';

/** Each instruction as (program, [account, signer?, writable?], data), independent of account order. */
function semantics(m: ReturnType<typeof compileLegacyMessage>, writable: (i: number) => boolean) {
  return m.instructions.map((ix) => ({
    program: m.accountKeys[ix.programIdIndex],
    accounts: ix.accountIndices.map((i) => [m.accountKeys[i], i < m.numRequiredSignatures, writable(i)]),
    data: [...ix.data],
  }));
}

describe('payload v1 compiled by kit', () => {
  it('means the same transaction as the legacy compile: accounts, roles, header and instructions', () => {
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
    const legacy = compileLegacyMessage(p.feePayer, p.instructions, blockhash);
    const tx = compileV1Transaction(p.feePayer, p.instructions, { blockhash, lastValidBlockHeight: 10 });
    const resolved = resolveAccounts(tx.message, new Map());
    if (!resolved.ok) throw new Error(resolved.message);
    const checked = checkedMessage(tx, resolved.accounts);

    expect(checked.version).toBe('legacy');
    expect(checked.accountKeys[0]).toBe(payer.pubkey);
    expect(new Set(checked.accountKeys)).toEqual(new Set(legacy.accountKeys));
    expect([checked.numRequiredSignatures, checked.numReadonlySigned, checked.numReadonlyUnsigned]).toEqual([
      legacy.numRequiredSignatures,
      legacy.numReadonlySigned,
      legacy.numReadonlyUnsigned,
    ]);
    expect(checked.recentBlockhash).toBe(blockhash);
    const legacyWritable = (i: number) =>
      i < legacy.numRequiredSignatures
        ? i < legacy.numRequiredSignatures - legacy.numReadonlySigned
        : i < legacy.accountKeys.length - legacy.numReadonlyUnsigned;
    expect(semantics(checked, (i) => checked.writable[i] === true)).toEqual(semantics(legacy, legacyWritable));
    expect(tx.signatures).toEqual([null, null]);
  });
});
