/**
 * The `payload` input schema in tools/list describes what the signer's parser accepts: payloads the parser reads
 * validate, and shapes it rejects do not, so an agent planning from the schema builds what the signer takes.
 */
import Ajv2020 from 'ajv/dist/2020';
import { toolDefinitions } from '../../src/mcp/tools';
import { PAYLOAD_SCHEMA } from '../../src/mcp/payload-schema';
import { parseRequestPayload } from '../../src/signer/message/request';
import { parsePayload } from '../../src/signer/payload';
import { keypair, payload, randomAddress, transferInstruction } from '../support/payloads';

const validate = new Ajv2020({ strict: false }).compile(PAYLOAD_SCHEMA);

function parses(p: unknown): boolean {
  try {
    parsePayload(p);
    return true;
  } catch {
    return false;
  }
}

test('check and sign take payload v1 or v2 as their payload schema, not a bare object', () => {
  for (const tool of toolDefinitions(true).filter((t) => t.name === 'check' || t.name === 'sign')) {
    const props = tool.inputSchema.properties as Record<string, unknown>;
    expect(props.payload).toBe(PAYLOAD_SCHEMA);
  }
});

test('every tool description says what a refusal means and what to do next', () => {
  for (const tool of toolDefinitions(false)) expect(tool.description).toMatch(/refused|isError|not_recorded/);
  const [check, sign] = toolDefinitions(false);
  expect(check?.description).toMatch(/failed_check names it, reason says why as a stable code/);
  expect(sign?.description).toMatch(/look up the signature before building a new one/);
});

test('payloads the parser reads validate; shapes it rejects do not', () => {
  const from = keypair().pubkey;
  const good = payload(from, [transferInstruction(from, randomAddress(), 1000)]);
  const withSigner = { ...good, partial_signers: [keypair().base64] };
  for (const p of [good, withSigner, { ...good, summary: null, warnings: null }]) {
    expect(parses(p)).toBe(true);
    expect(validate(p)).toBe(true);
  }
  const tx = good.transaction as Record<string, unknown>;
  const bad: unknown[] = [
    { ...good, version: 2 },
    { ...good, transaction: { ...tx, instructions: [] } },
    { ...good, transaction: { ...tx, fee_payer: 'not-an-address' } },
    { ...good, warnings: [1] },
    { ...good, partial_signers: ['short'] },
    { ...good, transaction: { ...tx, instructions: [{ program_id: randomAddress(), accounts: [], data: [256] }] } },
  ];
  for (const p of bad) {
    expect(parses(p)).toBe(false);
    expect(validate(p)).toBe(false);
  }
});

test('message payloads the parser reads validate; shapes it rejects do not', () => {
  const reads = (p: unknown): boolean => {
    try {
      parseRequestPayload(p);
      return true;
    } catch {
      return false;
    }
  };
  const text = { version: 'message', format: 'text', message: 'Sign in', signer: randomAddress(), summary: 'log in' };
  const offchain = {
    version: 'message',
    format: 'offchain',
    message: Buffer.from('\xffsolana offchain').toString('base64'),
  };
  for (const p of [text, offchain, { ...text, signer: null, warnings: null }]) {
    expect(reads(p)).toBe(true);
    expect(validate(p)).toBe(true);
  }
  for (const p of [
    { ...text, format: 'binary' },
    { ...text, message: '' },
    { ...text, message: 'x'.repeat(2000) },
    { ...text, signer: 'not-an-address' },
    { ...offchain, message: 'x'.repeat(1648) },
  ]) {
    expect(reads(p)).toBe(false);
    expect(validate(p)).toBe(false);
  }
});
