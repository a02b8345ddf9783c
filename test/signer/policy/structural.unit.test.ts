import type { ClusterProfile, KeyConfig } from '../../../src/config/types';
import { ataOwnersToVerify } from '../../../src/signer/policy/rules/ata-owners';
import { structuralRefusal, STRUCTURAL_CHECKS } from '../../../src/signer/policy/rules/structural';
import type { StructureFacts } from '../../../src/signer/policy/facts';
import { programError } from '../../../src/signer/flow/program-error';
import { compileLegacyMessage } from '../../../src/signer/compile';
import { parsePayloadV1 as parsePayload } from '../../../src/signer/payload';
import {
  ASSOCIATED_TOKEN_PROGRAM,
  COMPUTE_BUDGET_PROGRAM,
  DRAIN_SOL_VAULT_DISCRIMINATOR,
  SPL_TOKEN_PROGRAM,
  SYSTEM_PROGRAM,
  TOKEN_2022_PROGRAM,
} from '../../../src/solana/programs';
import { keypair, payload, randomAddress, transferInstruction, type PayloadInstruction } from '../../support/payloads';

const signing = keypair().pubkey;
const GAME = randomAddress();
const PROFILE = randomAddress();
const cluster: ClusterProfile = {
  name: 'test',
  genesis_hash: randomAddress(),
  rpc_url: 'http://127.0.0.1:1',
  explorer: null,
  programs: [
    { label: 'game', address: GAME },
    { label: 'player-profile', address: PROFILE },
    { label: 'compute-budget', address: COMPUTE_BUDGET_PROGRAM },
    { label: 'associated-token', address: ASSOCIATED_TOKEN_PROGRAM },
    { label: 'system', address: SYSTEM_PROGRAM },
  ],
  game_programs: [GAME, PROFILE],
  player_profile: PROFILE,
};

function key(over: Partial<KeyConfig> = {}): KeyConfig {
  return {
    name: 'k',
    class: 'session',
    pubkey: signing,
    profile: null,
    approval: 'auto',
    transfer_to: [],
    extra_programs: [],
    rate_limit_per_minute: 30,
    daily_lamport_cap: 50_000_000,
    allow_unattended: false,
    ...over,
  };
}

/** The key and the facts the structural rules judge. */
type CheckSubject = Omit<StructureFacts, 'at'> & { key: KeyConfig };

function subject(
  ixs: PayloadInstruction[],
  opts: { key?: KeyConfig; feePayer?: string; partials?: string[] } = {},
): CheckSubject {
  const feePayer = opts.feePayer ?? signing;
  const p = parsePayload(payload(feePayer, ixs));
  return {
    key: opts.key ?? key(),
    cluster,
    msg: compileLegacyMessage(feePayer, p.instructions, randomAddress()),
    partialSigners: opts.partials ?? [],
  };
}

const signer = (pubkey: string, writable = true) => ({ pubkey, is_signer: true, is_writable: writable });
const plain = (pubkey: string, writable = true) => ({ pubkey, is_signer: false, is_writable: writable });
const gameIx = (accounts = [signer(signing)], data = [1, 2, 3, 4, 5, 6, 7, 8]): PayloadInstruction => ({
  program_id: GAME,
  accounts,
  data,
});
const systemIx = (tag: number, accounts = [signer(signing), plain(randomAddress())]): PayloadInstruction => {
  const data = Buffer.alloc(12);
  data.writeUInt32LE(tag, 0);
  return { program_id: SYSTEM_PROGRAM, accounts, data: [...data] };
};
const ataIx = (
  owner: string,
  data: number[] = [1],
  slot4 = SYSTEM_PROGRAM,
  slot5 = SPL_TOKEN_PROGRAM,
): PayloadInstruction => ({
  program_id: ASSOCIATED_TOKEN_PROGRAM,
  accounts: [
    signer(signing),
    plain(randomAddress()),
    plain(owner, false),
    plain(randomAddress(), false),
    plain(slot4, false),
    plain(slot5, false),
  ],
  data,
});

const refusal = (s: CheckSubject) => structuralRefusal(s.key, { at: 'structure', ...s });

describe('structural checks', () => {
  it('passes a game instruction whose only signer is the key', () => {
    expect(refusal(subject([gameIx()]))).toBeNull();
    expect(STRUCTURAL_CHECKS).toEqual(['fee_payer', 'programs', 'tokens', 'system', 'vault', 'signers']);
  });

  it('refuses a foreign fee payer as fee_payer', () => {
    const other = randomAddress();
    expect(refusal(subject([gameIx([signer(other)])], { feePayer: other }))).toEqual({
      check: 'fee_payer',
      reason: 'fee_payer_not_key',
      figures: { fee_payer: other },
      message: `fee payer ${other} is not the signing key ${signing}`,
    });
  });

  it('refuses an unlisted program as programs, and allows it from extra_programs', () => {
    const p = randomAddress();
    const ix = { program_id: p, accounts: [signer(signing)], data: [] };
    expect(refusal(subject([ix]))).toEqual({
      check: 'programs',
      reason: 'program_not_allowed',
      figures: { instruction: 0, program: p },
      message: `instruction 0 calls ${p}, which is not allowed`,
    });
    expect(refusal(subject([ix], { key: key({ extra_programs: [p] }) }))).toBeNull();
  });

  it('refuses a transfer to an unlisted destination, and passes once it is in transfer_to', () => {
    const dest = randomAddress();
    const s = subject([transferInstruction(signing, dest, 10)]);
    expect(refusal(s)).toEqual({
      check: 'system',
      reason: 'transfer_destination_not_allowed',
      figures: { instruction: 0, destination: dest },
      message: `instruction 0 transfers to ${dest}, which is not an allowed destination`,
    });
    expect(
      refusal(subject([transferInstruction(signing, dest, 10)], { key: key({ transfer_to: [dest] }) })),
    ).toBeNull();
  });

  it.each([[0], [1], [3], [4], [8], [11]])('refuses System instruction %i even for a partial-signer account', (tag) => {
    const fresh = keypair().pubkey;
    const s = subject([systemIx(tag, [signer(signing), signer(fresh)])], { partials: [fresh] });
    expect(refusal(s)).toEqual({
      check: 'system',
      reason: 'system_instruction_not_allowed',
      figures: { instruction: 0 },
      message: `instruction 0 is System instruction ${tag}, which is not allowed`,
    });
  });

  it('refuses a System instruction shorter than its tag', () => {
    expect(refusal(subject([{ program_id: SYSTEM_PROGRAM, accounts: [signer(signing)], data: [2, 0] }]))).toEqual({
      check: 'system',
      reason: 'system_instruction_malformed',
      figures: { instruction: 0 },
      message: 'instruction 0 is too short',
    });
  });

  it('refuses signers that are neither the key nor partial signers, and partials that do not sign', () => {
    const stranger = randomAddress();
    expect(refusal(subject([gameIx([signer(signing), signer(stranger)])]))).toEqual({
      check: 'signers',
      reason: 'required_signer_unavailable',
      figures: { account: stranger },
      message: `${stranger} must sign, but it is neither the signing key nor a partial signer`,
    });
    const idle = keypair().pubkey;
    expect(refusal(subject([gameIx()], { partials: [idle] }))).toEqual({
      check: 'signers',
      reason: 'partial_signer_not_required',
      figures: { account: idle },
      message: `partial signer ${idle} is not a signer of the transaction`,
    });
    expect(refusal(subject([gameIx()], { partials: [signing] }))).toEqual({
      check: 'signers',
      reason: 'partial_signer_is_key',
      message: 'a partial signer is the signing key',
    });
  });

  it.each([[SPL_TOKEN_PROGRAM], [TOKEN_2022_PROGRAM]])(
    'lets any key call %s to move tokens (the token policy judges the simulation) but refuses authority operations it does not allow',
    (program) => {
      const transfer = { program_id: program, accounts: [signer(signing)], data: [3, 0, 0, 0, 0, 0, 0, 0, 0] };
      expect(refusal(subject([transfer]))).toBeNull();
      const approve = { program_id: program, accounts: [signer(signing)], data: [4, 1, 0, 0, 0, 0, 0, 0, 0] };
      expect(refusal(subject([approve]))).toEqual({
        check: 'tokens',
        reason: 'token_op_not_allowed',
        figures: { token_op: 'approve' },
        message:
          'instruction 0 is token instruction 4 (Approve), which this key may not do (add "approve" to its allow_token_ops to allow it)',
      });
      expect(refusal(subject([approve], { key: key({ allow_token_ops: ['approve'] }) }))).toBeNull();
      const setAuthority = { program_id: program, accounts: [signer(signing)], data: [6, 2, 0] };
      expect(refusal(subject([setAuthority]))?.message).toContain('add "set_authority"');
      const initializeMint = { program_id: program, accounts: [signer(signing)], data: [0, 6] };
      expect(refusal(subject([initializeMint]))).toEqual({
        check: 'tokens',
        reason: 'token_instruction_refused',
        figures: { instruction: 0 },
        message: 'instruction 0 is token instruction 0 (InitializeMint), which the signer does not sign',
      });
    },
  );

  it('with writable_allow, refuses writing an account that is neither the key, a destination nor listed', () => {
    const listed = randomAddress();
    const stray = randomAddress();
    const ix = gameIx([signer(signing), plain(listed), plain(stray), plain(randomAddress(), false)]);
    expect(refusal(subject([ix]))).toBeNull(); // unset: any account
    expect(refusal(subject([ix], { key: key({ writable_allow: [listed] }) }))).toEqual({
      check: 'destinations',
      reason: 'writable_not_allowed',
      figures: { account: stray },
      message: `the transaction writes ${stray}, which is neither the key, one of its transfer_to, nor in its writable_allow`,
    });
    expect(refusal(subject([ix], { key: key({ writable_allow: [listed], transfer_to: [stray] }) }))).toBeNull();
  });

  it('refuses Token-2022 extension instructions whatever the key allows', () => {
    const ix = { program_id: TOKEN_2022_PROGRAM, accounts: [signer(signing)], data: [26, 1] };
    const allowAll = key({ allow_token_ops: ['approve', 'set_authority', 'close_account', 'freeze', 'mint'] });
    expect(refusal(subject([ix], { key: allowAll }))).toEqual({
      check: 'tokens',
      reason: 'token_instruction_refused',
      figures: { instruction: 0 },
      message:
        'instruction 0 is token instruction 26 (a Token-2022 extension instruction), which the signer does not sign',
    });
  });

  it('allows ATA create data [], [0] and [1]; refuses [2] and [1,0]', () => {
    for (const data of [[], [0], [1]]) expect(refusal(subject([ataIx(signing, data)]))).toBeNull();
    expect(refusal(subject([ataIx(signing, [2])]))).toEqual({
      check: 'tokens',
      reason: 'ata_instruction_not_allowed',
      figures: { instruction: 0 },
      message: 'instruction 0 is associated-token instruction 2; only create is allowed',
    });
    expect(refusal(subject([ataIx(signing, [1, 0])]))?.reason).toBe('ata_instruction_not_allowed');
  });

  it('requires the real System and token programs in an ATA create', () => {
    expect(refusal(subject([ataIx(signing, [1], SYSTEM_PROGRAM, TOKEN_2022_PROGRAM)]))).toBeNull();
    expect(refusal(subject([ataIx(signing, [1], SYSTEM_PROGRAM, randomAddress())]))?.reason).toBe(
      'ata_create_malformed',
    );
    expect(refusal(subject([ataIx(signing, [1], randomAddress(), SPL_TOKEN_PROGRAM)]))?.reason).toBe(
      'ata_create_malformed',
    );
    const truncated = ataIx(signing);
    truncated.accounts = truncated.accounts.slice(0, 5);
    expect(refusal(subject([truncated]))?.message).toBe(
      'instruction 0 creates a token account without the System and SPL Token or Token-2022 programs',
    );
  });

  describe('vault', () => {
    const drain = [...DRAIN_SOL_VAULT_DISCRIMINATOR];
    const profileIx = (data: number[]) => ({ program_id: PROFILE, accounts: [signer(signing)], data });

    it('refuses a session key a drain, bare or with arguments, also behind a harmless instruction', () => {
      expect(refusal(subject([profileIx(drain)]))).toEqual({
        check: 'vault',
        reason: 'vault_withdrawal',
        figures: { instruction: 0 },
        message: 'instruction 0 withdraws the profile vault, which is refused for this key',
      });
      expect(refusal(subject([profileIx([...drain, 1, 0, 64, 66, 15, 0, 0, 0, 0, 0])]))?.reason).toBe(
        'vault_withdrawal',
      );
      expect(refusal(subject([gameIx(), profileIx(drain)]))?.figures).toEqual({ instruction: 1 });
    });

    it('lets a wallet key drain and a session key call other Player Profile instructions', () => {
      expect(refusal(subject([profileIx(drain)], { key: key({ class: 'wallet' }) }))).toBeNull();
      expect(refusal(subject([profileIx([1, 2, 3, 4, 5, 6, 7, 8])]))).toBeNull();
    });

    it('refuses Player Profile data too short to parse for a session key', () => {
      expect(refusal(subject([profileIx([])]))?.message).toBe(
        'instruction 0 is too short to parse as a Player Profile instruction',
      );
      expect(refusal(subject([profileIx(drain.slice(0, 4))]))).toMatchObject({
        check: 'vault',
        reason: 'vault_instruction_malformed',
        figures: { instruction: 0 },
      });
    });
  });

  describe('ata owners', () => {
    it('needs no look-up for the key or its destinations, and lists a foreign owner once', () => {
      const dest = randomAddress();
      const foreign = randomAddress();
      const s = subject([ataIx(signing), ataIx(dest), ataIx(foreign), ataIx(foreign), gameIx()], {
        key: key({ transfer_to: [dest] }),
      });
      expect(ataOwnersToVerify(s.key, s.msg)).toEqual([foreign]);
    });
  });
});

describe('program_error', () => {
  it('prefers a Program log line with Error, else the last failed line, else null', () => {
    expect(
      programError([
        'Program X invoke [1]',
        'Program log: StarFrameError: Cooldown active',
        'Program X failed: custom program error: 0x51890015',
      ]),
    ).toBe('StarFrameError: Cooldown active');
    expect(programError(['Program X invoke [1]', 'Program X failed: custom program error: 0x1'])).toBe(
      'Program X failed: custom program error: 0x1',
    );
    expect(programError(['Program X invoke [1]', 'Program X success'])).toBeNull();
  });
});
