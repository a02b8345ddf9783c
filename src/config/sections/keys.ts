/**
 * `keys`: the signing keys by name, each with its class, approval mode and limits. Each entry is checked against
 * `keySchema` (so an error names e.g. `keys.alice.class`), then against the operators its quorum names.
 */
import { fail, validateEntry } from '../fail';
import { defaultsOf, section, type Infer } from '../setting';
import { buildTokenPolicies, type TokenPolicy } from './key-tokens';
import { buildKeyUsd, keyUsdSchema, type KeyUsdCaps } from './key-usd';
import type { OperatorConfig } from './operators';
import { TOKEN_OPS } from './token-ops';
import { buildTreasury, treasurySchema, type TreasuryConfig } from './key-treasury';

/** The key stores (docs/keys.md): a plaintext keypair file, an age-encrypted file, or an HSM over PKCS#11. */
export const KEY_STORE_KINDS = ['file', 'encrypted', 'pkcs11'] as const;
export type KeyStoreKind = (typeof KEY_STORE_KINDS)[number];

export const keysSchema = section({
  keys: {
    doc: 'Signing keys by name ([a-z0-9_-]{1,64}); each entry follows the key schema (class, pubkey, approval, limits...).',
    format: Object,
    default: {},
  },
});

/** One entry of `keys:` (the entry's name is the key name). */
export const keySchema = section({
  class: {
    doc: "`session` (day-to-day play, approval auto by default) or `wallet` (the profile authority, confirm by default). A `biscuit_root` entry is the credentials' root key instead (serve.credentials.root_key; it takes only class, store and pubkey, and never signs a transaction or message).",
    format: ['session', 'wallet'],
    default: null,
  },
  store: {
    doc: 'Where the secret half is kept: `file` (a plaintext keypair file in key_dir), `encrypted` (an age file sealed with a passphrase) or `pkcs11` (inside an HSM token). docs/keys.md.',
    format: [...KEY_STORE_KINDS],
    default: 'file',
  },
  pubkey: {
    doc: "The key's public key (base58); its store must hold it (checked at start).",
    format: 'address',
    default: null,
  },
  profile: {
    doc: 'Player profile address, informational (shown by key_show).',
    format: 'address-or-null',
    default: null,
    nullable: true,
  },
  approval: {
    doc: '`auto`, `confirm` (an operator approves each sign) or `deny`; null: session → auto, wallet → confirm.',
    format: ['auto', 'confirm', 'deny', null],
    default: null,
    nullable: true,
  },
  approvals: {
    required: {
      doc: 'With approval `confirm`: how many distinct approvers must approve a sign (any one of them rejecting refuses it); 1 to the number of approvers.',
      format: 'positive-int',
      default: 1,
    },
    approvers: {
      doc: 'With approval `confirm`: the operators (names under `operators`) whose votes count; []: every configured operator.',
      format: 'string-list',
      default: [],
    },
  },
  transfer_to: {
    doc: 'Allowed System Transfer destinations (also trusted token-account owners).',
    format: 'address-list',
    default: [],
  },
  extra_programs: {
    doc: 'More top-level programs this key may call (never SPL Token or Token-2022).',
    format: 'address-list',
    default: [],
  },
  rate_limit_per_minute: { doc: 'Signs per minute for this key.', format: 'nat-strict', default: 30 },
  daily_lamport_cap: {
    doc: 'Lamports this key may spend or reserve in 24 h.',
    format: 'nat-strict',
    default: 50_000_000,
  },
  per_tx_lamports: {
    doc: 'Most lamports one transaction may cost this key, fee included (from the simulation); null: no per-transaction cap.',
    format: 'nat-or-null',
    default: null,
    nullable: true,
  },
  per_destination_per_day_lamports: {
    doc: 'Most lamports any one other account may receive from this key in 24 h (the rent of an account created for a program aside); null: no per-destination cap.',
    format: 'nat-or-null',
    default: null,
    nullable: true,
  },
  max_fee_lamports: {
    doc: 'Most lamports a transaction may pay in fees (base fee + priority fee from its ComputeBudget instructions); null: no fee cap.',
    format: 'nat-or-null',
    default: null,
    nullable: true,
  },
  approve_above_lamports: {
    doc: 'With approval `confirm`: a spend at or below it signs without an operator, above it an operator approves; null: every sign asks.',
    format: 'nat-or-null',
    default: null,
    nullable: true,
  },
  allow_unattended: {
    doc: 'Lets a wallet key be `auto` or listed on a token: throwaway testnet keys only.',
    format: 'bool-strict',
    default: false,
  },
  sign_only: {
    doc: 'Lets `sign` with mode "sign_only" return signed bytes for the caller to send (docs/payloads.md).',
    format: 'bool-strict',
    default: true,
  },
  writable_allow: {
    doc: 'When set, the only accounts besides the key and transfer_to that a transaction may write (token accounts included); null: any.',
    format: 'address-list-or-null',
    default: null,
    nullable: true,
  },
  tokens: {
    doc: 'Mints this key may spend, a list of {mint, program, per_tx, per_day, destinations, per_destination_per_day, approve_above} (amounts in base units; docs/policy.md, "Tokens").',
    format: 'object-list',
    default: [],
  },
  sign_messages: {
    doc: 'Lets `sign` sign off-chain messages and sign-in texts with this key (payload "message", docs/payloads.md). Off by default: such a signature can log in or authorise anything that trusts the key.',
    format: 'bool-strict',
    default: false,
  },
  usd: keyUsdSchema,
  allow_token_ops: {
    doc: `Token authority operations this key may perform: any of ${TOKEN_OPS.join(', ')} (docs/policy.md, "Token authority").`,
    format: 'token-ops',
    default: [],
  },
  treasury: treasurySchema,
});

type KeyEntry = Infer<typeof keySchema>;

export type KeyClass = KeyEntry['class'];
export type ApprovalMode = NonNullable<KeyEntry['approval']>;

/** A key's quorum, resolved: `approvers` names configured operators (all of them when the config lists none). */
export type KeyApprovals = KeyEntry['approvals'];

/** Settings a key built in code (tests, tools) may leave out; each then means its schema default. */
type OmittableInCode =
  | 'store'
  | 'per_tx_lamports'
  | 'per_destination_per_day_lamports'
  | 'max_fee_lamports'
  | 'approve_above_lamports'
  | 'sign_only'
  | 'sign_messages'
  | 'writable_allow'
  | 'allow_token_ops';

/**
 * A key as the loader resolves it: named, its approval mode decided, its token amounts in base units, and its
 * quorum present only when operators are configured.
 */
export type KeyConfig = Omit<KeyEntry, OmittableInCode | 'approval' | 'tokens' | 'approvals' | 'usd' | 'treasury'> &
  Partial<Pick<KeyEntry, OmittableInCode>> & {
    name: string;
    approval: ApprovalMode;
    tokens?: TokenPolicy[];
    approvals?: KeyApprovals;
    /** Dollar caps in micro-dollars (docs/pricing.md); absent or null: none. */
    usd?: KeyUsdCaps | null;
    /** Token accounts the key spends from as delegate (docs/treasury.md); absent: none. */
    treasury?: TreasuryConfig;
  };

const KEY_DEFAULTS = defaultsOf(keySchema);

/**
 * A setting a key built in code may leave out, read as the loader would have filled it: its schema default when
 * absent. Code reads these settings through it rather than repeating the default.
 */
export function keySetting<K extends OmittableInCode>(key: KeyConfig, name: K): KeyEntry[K] {
  const value = key[name];
  return value === undefined ? KEY_DEFAULTS[name] : (value as KeyEntry[K]);
}

const KEY_NAME = /^[a-z0-9_-]{1,64}$/;

/** A key's name, also a bearer token's: what files, logs, metrics and the audit use. */
export function isValidKeyName(name: string): boolean {
  return KEY_NAME.test(name);
}

/**
 * A key's quorum against the configured operators: the approvers named (every operator when it names none) and
 * how many must approve. Without operators the host's operator decides alone, so a key may not ask for more.
 */
function buildApprovals(key: string, given: KeyApprovals, operators: OperatorConfig[]): KeyApprovals | undefined {
  const where = `keys.${key}.approvals`;
  const names = operators.map((o) => o.name);
  const twice = given.approvers.find((a, i) => given.approvers.indexOf(a) !== i);
  if (twice !== undefined) fail(`${where}.approvers: ${JSON.stringify(twice)} is listed twice`);
  if (operators.length === 0) {
    if (given.approvers.length > 0)
      fail(`${where}.approvers: no operators are configured; list ${given.approvers.join(', ')} under operators`);
    if (given.required > 1)
      fail(`${where}.required: ${given.required} approvals need named operators; list them under operators`);
    return undefined;
  }
  for (const a of given.approvers) {
    if (!names.includes(a))
      fail(`${where}.approvers: ${JSON.stringify(a)} is not under operators (configured: ${names.join(', ')})`);
  }
  const approvers = given.approvers.length > 0 ? given.approvers : names;
  if (given.required > approvers.length) {
    fail(
      `${where}.required: ${given.required} approvals from ${approvers.length} approver${approvers.length === 1 ? '' : 's'} (${approvers.join(', ')}) can never be reached; use 1 to ${approvers.length}`,
    );
  }
  return { required: given.required, approvers };
}

export function buildKeys(raw: Record<string, unknown>, operators: OperatorConfig[]): KeyConfig[] {
  const keys: KeyConfig[] = [];
  for (const name of Object.keys(raw).sort()) {
    if (!isValidKeyName(name)) fail(`keys.${name}: key name must be 1 to 64 lowercase letters, digits, '-' or '_'`);
    const {
      approvals: given,
      usd,
      treasury: treasuryGiven,
      ...e
    } = validateEntry(keySchema, raw[name], `keys.${name}`);
    const approval: ApprovalMode = e.approval ?? (e.class === 'wallet' ? 'confirm' : 'auto');
    if (e.class === 'wallet' && approval === 'auto' && !e.allow_unattended) {
      fail(
        `keys.${name}.approval: a wallet key cannot be auto unless keys.${name}.allow_unattended is true (meant for throwaway testnet keys)`,
      );
    }
    // Halts, caps and rate limits are kept per name: two names for one pubkey would each have their own.
    const twin = keys.find((k) => k.pubkey === e.pubkey);
    if (twin) fail(`keys.${name}.pubkey: ${e.pubkey} is already keys.${twin.name}; configure each pubkey once`);
    const tokens = buildTokenPolicies(e.tokens, `keys.${name}.tokens`);
    const approvals = buildApprovals(name, given, operators);
    const treasury = buildTreasury(treasuryGiven, name, e.pubkey);
    keys.push({
      ...e,
      name,
      approval,
      tokens,
      allow_token_ops: [...new Set(e.allow_token_ops)],
      ...(approvals ? { approvals } : {}),
      usd: buildKeyUsd(usd),
      ...(treasury ? { treasury } : {}),
    });
  }
  return keys;
}
