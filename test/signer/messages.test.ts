/**
 * Message payloads through the real engine and ledger: off-chain messages built with kit's encoder and sign-in
 * texts are signed and verify with the key's public key; transactions dressed up as messages, messages a key
 * may not sign, halted keys and a full minute are refused and audited; a confirm key waits for its operator.
 */
import {
  address,
  appendTransactionMessageInstructions,
  compileTransactionMessage,
  createSolanaRpc,
  createTransactionMessage,
  getCompiledTransactionMessageEncoder,
  getOffchainMessageDecoder,
  getOffchainMessageEncoder,
  getOffchainMessageEnvelopeDecoder,
  getTransactionDecoder,
  offchainMessageApplicationDomain,
  offchainMessageContentUtf8Of1232BytesMax,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  verifyOffchainMessageEnvelope,
  type Blockhash,
  type OffchainMessage,
} from '@solana/kit';
import { createHash } from 'node:crypto';
import { renderApproval } from '../../src/cli/render';
import { verifySignature } from '../../src/keys/keypair';
import type { AuditEntry } from '../../src/ledger/types';
import { decodeAddress, decodeBase58, encodeBase58 } from '../../src/util/base58';
import { randomAddress } from '../support/payloads';
import { signAwaitingApproval } from '../support/async';
import { makeWorld, type World } from '../support/world';
import type { Report } from '../../src/signer/report';
import { SignerError } from '../../src/util/errors';
import { latestLifetime, transfer, wireTransaction } from './kit-transactions';

let w: World;

beforeAll(async () => {
  w = await makeWorld({
    keys: {
      alpha: { sign_messages: true },
      closed: {},
      slow: { sign_messages: true, rate_limit_per_minute: 2 },
      stopped: { sign_messages: true },
      careful: { sign_messages: true, approval: 'confirm', approve_above_lamports: 1_000_000_000 },
    },
  });
});
afterAll(async () => {
  await w.close();
});

const pubkey = (name: string): string => w.keys[name]!.pubkey;

function offchain(text: string, signers: string[], version: 0 | 1 = 0): Uint8Array {
  const requiredSignatories = signers.map((s) => ({ address: address(s) }));
  const message: OffchainMessage =
    version === 0
      ? {
          version: 0,
          applicationDomain: offchainMessageApplicationDomain(randomAddress()),
          content: offchainMessageContentUtf8Of1232BytesMax(text),
          requiredSignatories,
        }
      : { version: 1, content: text, requiredSignatories };
  return new Uint8Array(getOffchainMessageEncoder().encode(message));
}

const b64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64');

const messagePayload = (format: 'offchain' | 'text', message: string, extra: Record<string, unknown> = {}) => ({
  version: 'message',
  format,
  message,
  summary: 'log in to the game server',
  ...extra,
});

function verifies(name: string, bytes: Uint8Array, signature: string | null): boolean {
  expect(signature).not.toBeNull();
  return verifySignature(decodeAddress(pubkey(name))!, bytes, decodeBase58(signature!)!);
}

async function entries(): Promise<AuditEntry[]> {
  const out: AuditEntry[] = [];
  for await (const e of w.ledger.entries()) out.push(e);
  return out;
}

describe('signed', () => {
  it('an off-chain v0 message: the signature verifies with the key, the envelope with kit, and it is audited', async () => {
    const bytes = offchain('Sign in to the game server, nonce 8f2a', [pubkey('alpha')]);
    const report = await w.engine.sign({
      payload: messagePayload('offchain', b64(bytes), { signer: pubkey('alpha') }),
      principal: w.operator,
      intent: 'log in',
    });
    expect(report).toMatchObject({ outcome: 'signed', failed_check: null, key: 'alpha' });
    expect(report.checks).toEqual(['message', 'limits', 'approval']);
    expect(verifies('alpha', bytes, report.signature)).toBe(true);

    const envelope = getOffchainMessageEnvelopeDecoder().decode(Buffer.from(report.signed_message!, 'base64'));
    expect(Buffer.from(envelope.content).equals(Buffer.from(bytes))).toBe(true);
    await expect(verifyOffchainMessageEnvelope(envelope)).resolves.toBeUndefined();

    const entry = (await entries()).find((e) => e.signature === report.signature);
    expect(entry).toMatchObject({ command: 'sign-message', outcome: 'signed', key: 'alpha', intent: 'log in' });
    expect(entry!.detail).toContain(`sha256 ${createHash('sha256').update(bytes).digest('hex')}`);
    expect(entry!.detail).toContain('text: Sign in to the game server, nonce 8f2a');
    expect(entry!.balance_change).toBeNull();
    expect(await w.ledger.verify()).toMatchObject({ ok: true });
  });

  it('an off-chain v1 message with two signatories: only the key signs, its slot filled', async () => {
    const other = randomAddress();
    const bytes = offchain('approve session 42', [pubkey('alpha'), other], 1);
    const report = await w.engine.sign({
      payload: messagePayload('offchain', b64(bytes)),
      key: 'alpha',
      principal: w.operator,
    });
    expect(report.outcome).toBe('signed');
    expect(verifies('alpha', bytes, report.signature)).toBe(true);
    const envelope = getOffchainMessageEnvelopeDecoder().decode(Buffer.from(report.signed_message!, 'base64'));
    expect(envelope.signatures[address(other)]).toBeNull();
    expect(encodeBase58(new Uint8Array(envelope.signatures[address(pubkey('alpha'))]!))).toBe(report.signature);
  });

  it('a sign-in text is signed byte for byte; check says so first without signing', async () => {
    const text = `example.com wants you to sign in with your Solana account:\n${pubkey('alpha')}\n\nNonce: 31415926`;
    const payload = messagePayload('text', text, { signer: pubkey('alpha') });
    const before = (await entries()).length;
    const checked = await w.engine.check({ payload, principal: w.operator });
    expect(checked).toMatchObject({ outcome: 'ok', signature: null, would_need_approval: false });
    expect(checked.checks).toEqual(['message', 'limits']);
    expect((await entries()).length).toBe(before);

    const report = await w.engine.sign({ payload, principal: w.operator });
    expect(report).toMatchObject({ outcome: 'signed', signed_message: null });
    expect(verifies('alpha', new TextEncoder().encode(text), report.signature)).toBe(true);
  });
});

describe('refused', () => {
  it('a key with sign_messages off refuses the same message, and says how to change it', async () => {
    const bytes = offchain('Sign in', [pubkey('closed')]);
    const payload = messagePayload('offchain', b64(bytes), { signer: pubkey('closed') });
    const checked = await w.engine.check({ payload, principal: w.operator });
    expect(checked).toMatchObject({ outcome: 'refused', failed_check: 'authorized', reason: 'messages_not_allowed' });
    const report = await w.engine.sign({ payload, principal: w.operator });
    expect(report).toMatchObject({
      outcome: 'refused',
      failed_check: 'authorized',
      reason: 'messages_not_allowed',
      signature: null,
    });
    expect(report.detail).toMatch(/sign_messages is off/);
    expect((await entries()).at(-1)).toMatchObject({ command: 'sign-message', key: 'closed', outcome: 'refused' });
  });

  describe('transactions passed as messages', () => {
    const rpc = () => createSolanaRpc(w.localnet.url);
    const messageBytesOf = (wire: string) =>
      new Uint8Array(getTransactionDecoder().decode(Buffer.from(wire, 'base64')).messageBytes);

    it.each([
      ['legacy', 'legacy' as const],
      ['v0', 0 as const],
    ])('a %s transaction message is refused as "offchain"', async (_label, version) => {
      const wire = await wireTransaction(pubkey('alpha'), [transfer(address(pubkey('alpha')), randomAddress(), 1000)], {
        version,
        lifetime: await latestLifetime(rpc()),
      });
      const payload = messagePayload('offchain', b64(messageBytesOf(wire)), { signer: pubkey('alpha') });
      const report = await w.engine.sign({ payload, principal: w.operator });
      expect(report).toMatchObject({
        outcome: 'refused',
        failed_check: 'message',
        reason: 'message_is_transaction',
        signature: null,
      });
      expect(report.detail).toContain(`a ${version === 'legacy' ? 'legacy' : 'v0'} transaction message`);
      expect((await entries()).at(-1)).toMatchObject({
        command: 'sign-message',
        outcome: 'refused',
        signature: null,
      });
      // The whole wire transaction is refused the same way.
      const whole = await w.engine.check({
        payload: messagePayload('offchain', wire, { signer: pubkey('alpha') }),
        principal: w.operator,
      });
      expect(whole).toMatchObject({ outcome: 'refused', failed_check: 'message', reason: 'message_is_transaction' });
    });

    it('a legacy transaction message whose bytes are all ASCII is refused as "text" too', async () => {
      // Keys and blockhash of printable bytes: the compiled message is valid UTF-8, so it can pose as text.
      const ascii = (c: string) => encodeBase58(new Uint8Array(32).fill(c.charCodeAt(0)));
      const message = pipe(
        createTransactionMessage({ version: 'legacy' }),
        (m) => setTransactionMessageFeePayer(address(ascii('A')), m),
        (m) =>
          setTransactionMessageLifetimeUsingBlockhash(
            { blockhash: ascii('C') as Blockhash, lastValidBlockHeight: 100n },
            m,
          ),
        (m) =>
          appendTransactionMessageInstructions(
            [{ programAddress: address(ascii('B')), data: new TextEncoder().encode('hi') }],
            m,
          ),
      );
      const bytes = new Uint8Array(getCompiledTransactionMessageEncoder().encode(compileTransactionMessage(message)));
      expect(bytes.every((b) => b < 0x80)).toBe(true);
      const text = new TextDecoder().decode(bytes);
      const report = await w.engine.check({
        payload: messagePayload('text', text, { signer: pubkey('alpha') }),
        principal: w.operator,
      });
      expect(report).toMatchObject({ outcome: 'refused', failed_check: 'message', reason: 'message_is_transaction' });
      expect(report.detail).toContain('a legacy transaction message');
    });
  });

  it("an off-chain message that breaks the format's rules, or does not name the key, is refused", async () => {
    const good = offchain('hello', [pubkey('alpha')], 1);
    const trailing = new Uint8Array([...good, 0]); // kit's decoder drops the NUL: the text would not be the bytes
    const badUtf8 = new Uint8Array([...good.subarray(0, good.length - 1), 0xc3]);
    for (const bytes of [trailing, badUtf8]) {
      const report = await w.engine.check({
        payload: messagePayload('offchain', b64(bytes), { signer: pubkey('alpha') }),
        principal: w.operator,
      });
      expect(report).toMatchObject({ outcome: 'refused', failed_check: 'message', reason: 'offchain_message_invalid' });
      // Which of the format's rules: the detail names it.
      expect(report.detail).toMatch(/does not encode back to the same bytes/);
    }
    const notOurs = await w.engine.check({
      payload: messagePayload('offchain', b64(offchain('hello', [randomAddress()])), { signer: pubkey('alpha') }),
      principal: w.operator,
    });
    expect(notOurs).toMatchObject({ outcome: 'refused', failed_check: 'message', reason: 'not_a_signatory' });
  });

  it("a signer that is not the named key is refused, whoever's pubkey it is", async () => {
    const report = await w.engine.check({
      payload: messagePayload('text', 'Sign in', { signer: pubkey('slow') }),
      key: 'alpha',
      principal: w.operator,
    });
    expect(report).toMatchObject({
      outcome: 'refused',
      failed_check: 'signers',
      reason: 'message_signer_not_key',
      figures: { account: pubkey('slow') },
    });
  });

  it('a halted key refuses a message', async () => {
    await w.engine.halt({ key: 'stopped', reason: 'agent looping', principal: w.operator });
    const payload = messagePayload('text', 'Sign in please', { signer: pubkey('stopped') });
    expect(await w.engine.check({ payload, principal: w.operator })).toMatchObject({
      outcome: 'refused',
      failed_check: 'halted',
      reason: 'halted',
    });
    const report = await w.engine.sign({ payload, principal: w.operator });
    expect(report).toMatchObject({
      outcome: 'refused',
      failed_check: 'halted',
      reason: 'halted',
      figures: { by: 'operator' },
      signature: null,
    });
    expect(report.detail).toContain('agent looping');
  });

  it('signed messages count against rate_limit_per_minute, and a transaction after them is refused too', async () => {
    for (let i = 0; i < 2; i++) {
      const r = await w.engine.sign({
        payload: messagePayload('text', `Sign in #${i}`),
        key: 'slow',
        principal: w.operator,
      });
      expect(r.outcome).toBe('signed');
    }
    const [view] = await w.engine.keyShow({ key: 'slow', principal: w.operator });
    expect(view).toMatchObject({ signs_last_minute: 2, sign_messages: true, spent_or_reserved_24h: 0 });
    const third = await w.engine.sign({
      payload: messagePayload('text', 'Sign in #2'),
      key: 'slow',
      principal: w.operator,
    });
    expect(third).toMatchObject({
      outcome: 'refused',
      failed_check: 'limits',
      reason: 'rate_limit',
      figures: { signs_last_minute: 2, cap: 2 },
    });
    const tx = await w.engine.sign({ payload: w.transfer('slow', 1000), principal: w.operator });
    expect(tx).toMatchObject({ outcome: 'refused', failed_check: 'limits', reason: 'rate_limit' });
  });

  it('a token may sign messages only with its own keys; nothing is written under a key it may not use', async () => {
    const token = { kind: 'token' as const, name: 'agent', keys: ['alpha'] };
    const before = (await entries()).length;
    const report = await w.engine.sign({ payload: messagePayload('text', 'Sign in'), key: 'slow', principal: token });
    expect(report).toMatchObject({ outcome: 'refused', failed_check: 'authorized', reason: 'key_not_authorized' });
    expect((await entries()).length).toBe(before);
    const ok = await w.engine.sign({
      payload: messagePayload('text', 'Sign in', { signer: pubkey('alpha') }),
      principal: token,
    });
    expect(ok.outcome).toBe('signed');
  });
});

describe('payload errors', () => {
  it.each([
    [
      'no key and no signer',
      { format: 'text', message: 'Sign in' },
      /pass `key`, or the key's pubkey as the payload's `signer`/,
    ],
    ['a text over 1232 bytes', { format: 'text', message: 'x'.repeat(1233) }, /at most 1232/],
    ['an unknown format', { format: 'binary', message: 'x' }, /format must be "offchain"/],
    ['off-chain bytes not in base64', { format: 'offchain', message: 'not base64!' }, /not canonical base64/],
    ['a lone surrogate', { format: 'text', message: 'lone \ud800 surrogate' }, /not well-formed Unicode/],
  ])('%s is an error naming what to fix', async (_label, fields, error) => {
    const payload = { version: 'message', ...fields };
    const failure = await w.engine.check({ payload, principal: w.operator }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(SignerError);
    expect((failure as SignerError).code).toBe('payload_invalid');
    expect((failure as SignerError).message).toMatch(error);
  });
});

/** Starts a sign on the careful (confirm) key and resolves with it and its approval id once it waits. */
async function signAwaitingCareful(payload: object): Promise<{ id: string; pending: Promise<Report> }> {
  const { id, done } = await signAwaitingApproval(w.engine, { payload, key: 'careful', principal: w.operator });
  return { id, pending: done };
}

describe('a confirm key', () => {
  it('asks its operator for every message, whatever approve_above_lamports says, and signs once approved', async () => {
    const text = 'Sign in to the admin console';
    const checked = await w.engine.check({
      payload: messagePayload('text', text),
      key: 'careful',
      principal: w.operator,
    });
    expect(checked).toMatchObject({ outcome: 'ok', would_need_approval: true });
    const { id, pending } = await signAwaitingCareful(messagePayload('text', text));
    const request = await w.ledger.getApproval(id);
    expect(request).toMatchObject({
      key: 'careful',
      message: text,
      message_description: 'sign-in text (UTF-8)',
      balance_change: null,
    });
    await w.ledger.decideApproval(id, 'approved', 'operator', Math.floor(Date.now() / 1000));
    const report = await pending;
    expect(report).toMatchObject({ outcome: 'signed', key: 'careful' });
    expect(verifies('careful', new TextEncoder().encode(text), report.signature)).toBe(true);
    const [entry] = (await w.ledger.tail(1)).filter((e) => e.command === 'sign-message');
    expect(entry?.detail).toContain(`approval ${id} approved by operator`);
    // The operators' names come before the agent's text, which ends the entry whatever it says.
    expect(entry?.detail?.endsWith(`text: ${text}`)).toBe(true);
  });

  it("shows the operator an off-chain message's application domain and signatories beside its text", async () => {
    const bytes = offchain('Authorise the bot for one hour', [pubkey('careful')]);
    const { id, pending } = await signAwaitingCareful(
      messagePayload('offchain', b64(bytes), { signer: pubkey('careful') }),
    );
    const request = await w.ledger.getApproval(id);
    const decoded = getOffchainMessageDecoder().decode(bytes);
    if (decoded.version !== 0) throw new Error('the test builds a v0 message');
    const shown = renderApproval(request!);
    expect(shown).toContain(`what it is: off-chain message v0 (application domain ${decoded.applicationDomain}`);
    expect(shown).toContain(`for ${pubkey('careful')}`);
    expect(shown).toContain('message (exactly the text signed, escaped): Authorise the bot for one hour');
    await w.ledger.decideApproval(id, 'rejected', 'operator', Math.floor(Date.now() / 1000));
    expect(await pending).toMatchObject({ outcome: 'refused', failed_check: 'approval', reason: 'approval_rejected' });
  });
});
