/**
 * Hostile version-1 payloads as fast-check arbitraries. Every value carries at least one defect that must stop it
 * before a signature: a wrong type, a huge array, bad base58, a forged or misplaced partial signer, a disallowed
 * program, an oversize transaction, a transfer the key may not make, a signer that cannot sign. The `defect`
 * says which, so a failure names what got through.
 */
import crypto from 'node:crypto';
import fc from 'fast-check';
import { decodeBase58, encodeBase58 } from '../../../src/util/base58';
import {
  ASSOCIATED_TOKEN_PROGRAM,
  COMPUTE_BUDGET_PROGRAM,
  SPL_TOKEN_PROGRAM,
  SYSTEM_PROGRAM,
  TOKEN_2022_PROGRAM,
} from '../../../src/solana/programs';
import { keypair, transferInstruction, type PayloadInstruction } from '../../support/payloads';

export interface PayloadTarget {
  /** The key the payload is aimed at, its allowed destination, and another configured key. */
  feePayer: string;
  destination: string;
  otherKey: string;
  /** More than the key's daily cap, in lamports. */
  overCap: number;
  /** More than the key's balance, in lamports (and below the cap). */
  overBalance: number;
}

export interface HostilePayload {
  defect: string;
  payload: unknown;
  /** Partial-signer keypairs put in the payload: secrets the signer must never show. */
  secrets: Uint8Array[];
}

const BAD_BASE58 = [
  '',
  ' ',
  '0'.repeat(44),
  'O'.repeat(32),
  'I1111111111111111111111111111111',
  'l'.repeat(43),
  '1111111111111111111111111111111',
  '11111111111111111111111111111111111111111111111',
  'So11111111111111111111111111111111111111112!',
  'ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ',
  'é'.repeat(32),
  '\u0000'.repeat(32),
];
const DISALLOWED_PROGRAMS = [
  SPL_TOKEN_PROGRAM,
  TOKEN_2022_PROGRAM,
  'BPFLoaderUpgradeab1e11111111111111111111111',
  'Vote111111111111111111111111111111111111111',
  'Stake11111111111111111111111111111111111111',
  'Sysvar1nstructions1111111111111111111111111',
  'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr',
];

const NO_SECRETS: Uint8Array[] = [];
const randomAddress = (bytes: Uint8Array): string => encodeBase58(bytes);
const address32 = fc.uint8Array({ minLength: 32, maxLength: 32 }).map(randomAddress);

function base(t: PayloadTarget, instructions: unknown[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    version: 1,
    summary: 'fuzzed payload',
    warnings: [],
    transaction: { fee_payer: t.feePayer, instructions },
    ...extra,
  };
}

const wrongType = fc.constantFrom<unknown>(null, 0, 1.5, -1, '', 'x', true, [], {}, [1, 2], { a: 1 }, 2 ** 64, '1');

/** A valid transfer payload with one field replaced by a value of the wrong type. */
function wrongTypes(t: PayloadTarget): fc.Arbitrary<HostilePayload> {
  const paths: [string, (p: Record<string, unknown>, v: unknown) => void, (v: unknown) => boolean][] = [
    ['version', (p, v) => (p.version = v), (v) => v !== 1],
    ['transaction', (p, v) => (p.transaction = v), () => true],
    ['transaction.fee_payer', (p, v) => ((p.transaction as Record<string, unknown>).fee_payer = v), () => true],
    ['transaction.instructions', (p, v) => ((p.transaction as Record<string, unknown>).instructions = v), () => true],
    ['instruction', (p, v) => (ixs(p)[0] = v as PayloadInstruction), () => true],
    [
      'instruction.program_id',
      (p, v) => ((ixs(p)[0] as unknown as Record<string, unknown>).program_id = v),
      () => true,
    ],
    [
      'instruction.accounts',
      (p, v) => ((ixs(p)[0] as unknown as Record<string, unknown>).accounts = v),
      (v) => !Array.isArray(v) || v.length > 0,
    ],
    [
      'instruction.data',
      (p, v) => ((ixs(p)[0] as unknown as Record<string, unknown>).data = v),
      (v) => !(Array.isArray(v) && v.length === 0),
    ],
    [
      'account.is_signer',
      (p, v) => ((ixs(p)[0]!.accounts[0] as unknown as Record<string, unknown>).is_signer = v),
      (v) => typeof v !== 'boolean',
    ],
    [
      'account.pubkey',
      (p, v) => ((ixs(p)[0]!.accounts[0] as unknown as Record<string, unknown>).pubkey = v),
      () => true,
    ],
    ['summary', (p, v) => (p.summary = v), (v) => typeof v !== 'string' && v !== null],
    ['warnings', (p, v) => (p.warnings = v), (v) => !(Array.isArray(v) && v.length === 0) && v !== null],
    ['partial_signers', (p, v) => (p.partial_signers = v), (v) => !(Array.isArray(v) && v.length === 0) && v !== null],
  ];
  return fc
    .tuple(fc.constantFrom(...paths), wrongType, fc.integer({ min: 1, max: 1000 }))
    .filter(([[, , bad], v]) => bad(v))
    .map(([[name, set], v, lamports]) => {
      const p = base(t, [transferInstruction(t.feePayer, t.destination, lamports)]);
      set(p, v);
      return { defect: `wrong type at ${name}: ${JSON.stringify(v)}`, payload: p, secrets: NO_SECRETS };
    });
}

function ixs(p: Record<string, unknown>): PayloadInstruction[] {
  return (p.transaction as { instructions: PayloadInstruction[] }).instructions;
}

/** Huge arrays: thousands of instructions, accounts, data bytes or warnings (never fit in a transaction). */
function hugeArrays(t: PayloadTarget): fc.Arbitrary<HostilePayload> {
  return fc.oneof(
    fc.integer({ min: 60, max: 1500 }).map((n) => ({
      defect: `${n} instructions`,
      payload: base(
        t,
        Array.from({ length: n }, () => transferInstruction(t.feePayer, t.destination, 1)),
      ),
      secrets: NO_SECRETS,
    })),
    fc.integer({ min: 40, max: 400 }).map((n) => {
      const ix = transferInstruction(t.feePayer, t.destination, 1);
      for (let i = 0; i < n; i++)
        ix.accounts.push({ pubkey: encodeBase58(crypto.randomBytes(32)), is_signer: false, is_writable: false });
      return { defect: `${n} extra accounts`, payload: base(t, [ix]), secrets: NO_SECRETS };
    }),
    fc.integer({ min: 1_300, max: 40_000 }).map((n) => {
      const ix = transferInstruction(t.feePayer, t.destination, 1);
      ix.data = [...ix.data, ...new Array<number>(n).fill(7)];
      return { defect: `${n} extra data bytes`, payload: base(t, [ix]), secrets: NO_SECRETS };
    }),
    fc.integer({ min: 1, max: 5 }).map((k) => ({
      defect: `${k * 1000} warnings on an unsignable payload`,
      payload: base(t, [transferInstruction(t.feePayer, encodeBase58(crypto.randomBytes(32)), 1)], {
        warnings: Array.from({ length: k * 1000 }, (_, i) => `w${i}`),
      }),
      secrets: NO_SECRETS,
    })),
  );
}

/** Bad base58 where an address goes. */
function badBase58(t: PayloadTarget): fc.Arbitrary<HostilePayload> {
  const bad = fc.oneof(
    fc.constantFrom(...BAD_BASE58),
    fc.string({ maxLength: 50 }).filter((s) => !/^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(s)),
    fc
      .uint8Array({ minLength: 1, maxLength: 64 })
      .filter((b) => b.length !== 32)
      .map(randomAddress),
  );
  return fc.tuple(fc.constantFrom('fee_payer', 'program_id', 'account', 'destination'), bad).map(([where, value]) => {
    const ix = transferInstruction(t.feePayer, t.destination, 1) as unknown as {
      program_id: string;
      accounts: { pubkey: string }[];
    };
    const p = base(t, [ix]);
    if (where === 'fee_payer') (p.transaction as Record<string, unknown>).fee_payer = value;
    if (where === 'program_id') ix.program_id = value;
    if (where === 'account') ix.accounts[0]!.pubkey = value;
    if (where === 'destination') ix.accounts[1]!.pubkey = value;
    return { defect: `bad base58 ${where}: ${JSON.stringify(value)}`, payload: p, secrets: NO_SECRETS };
  });
}

/** Partial signers that are malformed, forged (public half not the seed's), misplaced, or claim the key itself. */
function forgedPartialSigners(t: PayloadTarget): fc.Arbitrary<HostilePayload> {
  return fc
    .constantFrom(
      'not-base64',
      'short',
      'long',
      'forged-pubkey',
      'claims-the-key',
      'not-a-signer',
      'url-safe',
      'unpadded',
      'not-strings',
    )
    .chain((kind) =>
      fc.integer({ min: 1, max: 1000 }).map((lamports): HostilePayload => {
        const kp = keypair();
        const secrets = [kp.bytes];
        let signer: unknown;
        let instructions: unknown[] = [transferInstruction(t.feePayer, t.destination, lamports)];
        // A new account the transaction needs signed (as in a real create): the slot a partial signer fills.
        const needsSigner = (pubkey: string): PayloadInstruction => ({
          program_id: SYSTEM_PROGRAM,
          accounts: [
            { pubkey: t.feePayer, is_signer: true, is_writable: true },
            { pubkey, is_signer: true, is_writable: true },
          ],
          data: [0, 0, 0, 0, ...new Array<number>(48).fill(0)],
        });
        switch (kind) {
          case 'not-base64':
            signer = `${kp.base64.slice(0, 40)}!!${kp.base64.slice(42)}`;
            break;
          case 'short':
            signer = Buffer.from(kp.bytes.subarray(0, 63)).toString('base64');
            break;
          case 'long':
            signer = Buffer.concat([Buffer.from(kp.bytes), Buffer.from([1])]).toString('base64');
            break;
          case 'forged-pubkey': {
            // The seed of one key with the public half of another: the signer must refuse to believe the claim.
            const victim = crypto.randomBytes(32);
            const forged = Buffer.concat([Buffer.from(kp.bytes.subarray(0, 32)), victim]);
            signer = forged.toString('base64');
            instructions = [needsSigner(encodeBase58(victim))];
            break;
          }
          case 'claims-the-key': {
            // A random seed whose public half claims to be the signing key.
            const forged = Buffer.concat([Buffer.from(kp.bytes.subarray(0, 32)), Buffer.from(decode(t.feePayer))]);
            signer = forged.toString('base64');
            break;
          }
          case 'not-a-signer':
            signer = kp.base64;
            break;
          case 'url-safe':
            signer = Buffer.from(kp.bytes).toString('base64url');
            instructions = [needsSigner(kp.pubkey)];
            break;
          case 'unpadded':
            signer = kp.base64.replace(/=+$/, '');
            instructions = [needsSigner(kp.pubkey)];
            break;
          case 'not-strings':
            signer = Array.from(kp.bytes);
            break;
        }
        return {
          defect: `partial signer ${kind}`,
          payload: base(t, instructions, { partial_signers: [signer] }),
          secrets,
        };
      }),
    );
}

function decode(address: string): Uint8Array {
  return decodeBase58(address)!;
}

/** Instructions calling programs the key may not call, or allowed programs in ways the checks refuse. */
function disallowedPrograms(t: PayloadTarget): fc.Arbitrary<HostilePayload> {
  return fc.oneof(
    fc
      .tuple(
        fc.oneof(fc.constantFrom(...DISALLOWED_PROGRAMS), address32),
        fc.uint8Array({ maxLength: 40 }),
        fc.boolean(),
      )
      .map(([program, data, first]) => {
        const bad: PayloadInstruction = {
          program_id: program,
          accounts: [{ pubkey: t.feePayer, is_signer: true, is_writable: true }],
          data: [...data],
        };
        const ok = transferInstruction(t.feePayer, t.destination, 1);
        return { defect: `calls ${program}`, payload: base(t, first ? [bad, ok] : [ok, bad]), secrets: NO_SECRETS };
      }),
    fc.integer({ min: 2, max: 255 }).map((tag) => ({
      defect: `associated-token instruction ${tag}`,
      payload: base(t, [
        {
          program_id: ASSOCIATED_TOKEN_PROGRAM,
          accounts: [{ pubkey: t.feePayer, is_signer: true, is_writable: true }],
          data: [tag],
        },
      ]),
      secrets: NO_SECRETS,
    })),
    fc
      .integer({ min: 0, max: 12 })
      .filter((tag) => tag !== 2)
      .map((tag) => {
        const data = Buffer.alloc(12);
        data.writeUInt32LE(tag, 0);
        return {
          defect: `System instruction ${tag}`,
          payload: base(t, [
            {
              program_id: SYSTEM_PROGRAM,
              accounts: [
                { pubkey: t.feePayer, is_signer: true, is_writable: true },
                { pubkey: t.destination, is_signer: false, is_writable: true },
              ],
              data: [...data],
            },
          ]),
          secrets: NO_SECRETS,
        };
      }),
    fc.uint8Array({ maxLength: 3 }).map((d) => ({
      defect: 'truncated System instruction',
      payload: base(t, [
        {
          program_id: SYSTEM_PROGRAM,
          accounts: [{ pubkey: t.feePayer, is_signer: true, is_writable: true }],
          data: [...d],
        },
      ]),
      secrets: NO_SECRETS,
    })),
  );
}

/** Transactions larger than 1232 bytes built from allowed instructions. */
function oversize(t: PayloadTarget): fc.Arbitrary<HostilePayload> {
  return fc.integer({ min: 1_100, max: 4_000 }).map((n) => ({
    defect: `oversize: ${n} data bytes on ComputeBudget`,
    payload: base(t, [
      { program_id: COMPUTE_BUDGET_PROGRAM, accounts: [], data: new Array<number>(n).fill(3) },
      transferInstruction(t.feePayer, t.destination, 1),
    ]),
    secrets: NO_SECRETS,
  }));
}

/** Well-formed transfers the policy must refuse: elsewhere, from someone else, past the cap or the balance. */
function forbiddenTransfers(t: PayloadTarget): fc.Arbitrary<HostilePayload> {
  return fc.oneof(
    fc.tuple(address32, fc.integer({ min: 1, max: 1_000_000 })).map(([to, n]) => ({
      defect: `transfer to ${to}`,
      payload: base(t, [transferInstruction(t.feePayer, to, n)]),
      secrets: NO_SECRETS,
    })),
    fc.integer({ min: 1, max: 1_000_000 }).map((n) => ({
      defect: 'transfer from another key',
      payload: base(t, [transferInstruction(t.otherKey, t.destination, n)]),
      secrets: NO_SECRETS,
    })),
    fc.integer({ min: 1, max: 1_000_000 }).map((n) => ({
      defect: 'fee payer is another key',
      payload: {
        ...base(t, [transferInstruction(t.otherKey, t.destination, n)]),
        transaction: { fee_payer: t.otherKey, instructions: [transferInstruction(t.otherKey, t.destination, n)] },
      },
      secrets: NO_SECRETS,
    })),
    fc.integer({ min: t.overCap, max: t.overCap * 4 }).map((n) => ({
      defect: `transfer of ${n} past the daily cap`,
      payload: base(t, [transferInstruction(t.feePayer, t.destination, n)]),
      secrets: NO_SECRETS,
    })),
    fc.integer({ min: t.overBalance, max: t.overBalance * 2 }).map((n) => ({
      defect: `transfer of ${n} past the balance`,
      payload: base(t, [transferInstruction(t.feePayer, t.destination, n)]),
      secrets: NO_SECRETS,
    })),
    address32.map((signer) => ({
      defect: `an extra signer ${signer} nobody provides`,
      payload: base(t, [
        {
          ...transferInstruction(t.feePayer, t.destination, 1),
          accounts: [
            ...transferInstruction(t.feePayer, t.destination, 1).accounts,
            { pubkey: signer, is_signer: true, is_writable: false },
          ],
        },
      ]),
      secrets: NO_SECRETS,
    })),
    fc.constant({ defect: 'no instructions', payload: base(t, []), secrets: NO_SECRETS }),
    fc
      .constantFrom<unknown>(null, 'not json', '{"version":1', 42, [], { version: 1 })
      .map((p) => ({ defect: `not a payload: ${JSON.stringify(p)}`, payload: p, secrets: NO_SECRETS })),
  );
}

export function hostilePayload(t: PayloadTarget): fc.Arbitrary<HostilePayload> {
  return fc.oneof(
    wrongTypes(t),
    hugeArrays(t),
    badBase58(t),
    forgedPartialSigners(t),
    disallowedPrograms(t),
    oversize(t),
    forbiddenTransfers(t),
  );
}

export const DEFECT_FAMILIES = [
  'wrong types',
  'huge arrays',
  'bad base58',
  'forged partial signers',
  'disallowed programs',
  'oversize',
  'forbidden transfers',
];
