/**
 * Verifying a credential (a Biscuit the signer's root key issued, maybe narrowed since) and judging a request
 * against it. Two steps, because the HTTP layer knows the request only once its body has arrived:
 *
 *   verify(bearer)        the signature chain against the root public key; the root is one the config lists as
 *                         issued; no block is revoked; every block holds only checks in the signer's vocabulary.
 *   authorize(request)    every block's checks against the request's facts and the signer's clock.
 *
 * Each step returns its outcome (a verified credential, or a refusal naming why); nothing here throws for a bad
 * credential. The credential's text is never kept, logged or echoed: what identifies it is its revocation ids.
 */
import type { BiscuitLib, BiscuitToken } from './biscuit-lib';
import { publicKey } from './issue';
import { credentialRefusal, failureKind, refusalFromAuthorizer, type CredentialRefusal } from './refusal';
import type { CredentialBudget } from '../signer/types';
import {
  BUDGET_PREDICATE,
  USD_BUDGET_PREDICATE,
  blockProblem,
  budgetOf,
  limitsUsd,
  requestFacts,
  usdBudgetOf,
  type CredentialRequest,
} from './vocabulary';

/** A root credential the config lists (`serve.credentials.issued`): its name, its root block's id, its keys. */
export interface IssuedCredential {
  name: string;
  /** The revocation id of its root block (hex), printed by `token new --biscuit`. */
  revocation_id: string;
  /** The configured keys it may use; its root block says the same, and the signer holds it to both. */
  keys: string[];
}

export interface VerifiedCredential {
  /** The issued root it derives from. */
  readonly root: IssuedCredential;
  /** Its blocks' revocation ids, root first. */
  readonly revocationIds: readonly string[];
  /** The last block's revocation id: what tells this credential from another narrowed from the same root. */
  readonly id: string;
  /** Each block's checks, as its source states them (one per line), root first. */
  readonly checks: readonly (readonly string[])[];
  /** The daily budgets its blocks state (the smallest per block), in block order: the signer keeps each. */
  readonly budgets: readonly CredentialBudget[];
  /** The first block that limits dollars (`usd_micros_out`, `per_day_usd_micros`), or null. */
  readonly usdLimitedBy: number | null;
  /** Every block's checks against the request at `now`: null when all pass, else the first that refused. */
  authorize(request: CredentialRequest, now: Date): CredentialRefusal | null;
  /** Releases the library's memory for it (the credential of one HTTP request). */
  dispose(): void;
  /** Whether it was disposed (its request ended): it can no longer be judged. */
  readonly disposed: boolean;
}

export type Verification = { ok: true; credential: VerifiedCredential } | { ok: false; refusal: CredentialRefusal };

export interface CredentialVerifierOptions {
  /** The root public key as the library prints it (`ed25519/<hex>`). */
  rootPublicKey: string;
  issued: readonly IssuedCredential[];
  /** Revocation ids (hex) refused wherever they appear in a chain. */
  revoked: readonly string[];
  /**
   * The revoked ids in force at each verification and judgement (a reload or an operator in the console may add
   * some, also while a sign waits for its approval); the list above when absent.
   */
  revokedNow?: () => ReadonlySet<string>;
}

export interface CredentialVerifier {
  verify(bearer: string): Verification;
}

/**
 * Bounds on one authorization: a credential is a few checks over a handful of facts, and the bounds keep a block
 * written to make the Datalog engine work hard from costing the service more than a request's worth of time.
 */
const RUN_LIMITS = { max_facts: 1000, max_iterations: 100, max_time_micro: 200_000 };

/** A bearer value shaped like a Biscuit: URL-safe base64 (opaque tokens start `sfs_`, never a Biscuit's prefix). */
const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/;

/** A block's checks and rejects from its source (the library prints one statement a line), its facts left out. */
function blockChecks(source: string): string[] {
  return source
    .split('\n')
    .map((line) => line.trim().replace(/;$/, ''))
    .filter((line) => line.startsWith('check ') || line.startsWith('reject '));
}

/** Each block's daily budget, where it states one (several: the smallest binds). */
function budgetsOf(ids: readonly string[], checks: readonly (readonly string[])[]): CredentialBudget[] {
  const out: CredentialBudget[] = [];
  checks.forEach((blockChecks, block) => {
    const lamports = blockChecks.map(budgetOf).filter((n): n is number => n !== null);
    const usd = blockChecks.map(usdBudgetOf).filter((n): n is number => n !== null);
    if (lamports.length > 0 || usd.length > 0)
      out.push({
        block,
        revocation_id: ids[block] ?? '',
        per_day_lamports: lamports.length > 0 ? Math.min(...lamports) : null,
        per_day_usd_micros: usd.length > 0 ? BigInt(Math.min(...usd)) : null,
      });
  });
  return out;
}

/** The budget figures the credential's checks state, by kind: the signer states each as kept. */
interface StatedBudgets {
  lamports: ReadonlySet<number>;
  usd: ReadonlySet<number>;
}

/** The refusal of a chain with a revoked block (the first one), or null. */
function revocation(ids: readonly string[], revoked: ReadonlySet<string>): CredentialRefusal | null {
  const at = ids.findIndex((id) => revoked.has(id));
  if (at < 0) return null;
  return credentialRefusal(
    'revoked',
    `the credential is revoked (${at === 0 ? 'its root' : `its block ${at}`}); ask for a new one`,
    { block: at },
  );
}

export function createCredentialVerifier(lib: BiscuitLib, opts: CredentialVerifierOptions): CredentialVerifier {
  const rootKey = publicKey(lib, opts.rootPublicKey);
  const issuedById = new Map(opts.issued.map((c) => [c.revocation_id, c]));
  const configured = new Set(opts.revoked);
  const revokedNow = opts.revokedNow ?? (() => configured);

  function authorizeWith(token: BiscuitToken, req: CredentialRequest, now: Date, budgets: StatedBudgets) {
    // The builder and each fact are consumed by the call they are passed to (the library takes them over).
    const builder = new lib.AuthorizerBuilder();
    // The budgets the signer keeps for this credential (the gate judges them on the ledger's usage): stated, so
    // each block's budget check holds.
    for (const [predicate, figures] of [
      [BUDGET_PREDICATE, budgets.lamports],
      [USD_BUDGET_PREDICATE, budgets.usd],
    ] as const)
      for (const n of figures) {
        const fact = lib.Fact.fromString(`${predicate}({v})`);
        fact.set('v', n);
        builder.addFact(fact);
      }
    for (const { predicate, term } of requestFacts(req, now)) {
      if ('pair' in term) {
        const fact = lib.Fact.fromString(`${predicate}({s}, {n})`);
        fact.set('s', term.pair[0]);
        fact.set('n', term.pair[1]);
        builder.addFact(fact);
        continue;
      }
      const fact = lib.Fact.fromString(`${predicate}({v})`);
      fact.set(
        'v',
        'date' in term ? { date: term.date.toISOString() } : 'integer' in term ? term.integer : term.string,
      );
      builder.addFact(fact);
    }
    // Every block's checks must pass; the signer adds no policy of its own beyond them.
    builder.addCode('allow if true;');
    const authorizer = builder.buildAuthenticated(token);
    try {
      authorizer.authorizeWithLimits(RUN_LIMITS);
      return null;
    } catch (e) {
      return refusalFromAuthorizer(e);
    } finally {
      authorizer.free();
    }
  }

  return {
    verify(bearer) {
      if (!BASE64URL.test(bearer))
        return { ok: false, refusal: credentialRefusal('malformed', 'the bearer value is not a credential') };
      let token: BiscuitToken;
      try {
        token = lib.Biscuit.fromBase64(bearer, rootKey);
      } catch (e) {
        return {
          ok: false,
          refusal: credentialRefusal(
            'signature',
            `the credential does not verify against this signer's root key (${failureKind(e)}); ask for a credential this signer issued`,
          ),
        };
      }
      const refuse = (refusal: CredentialRefusal): Verification => {
        token.free();
        return { ok: false, refusal };
      };
      const ids = (token.getRevocationIdentifiers() as unknown[]).map(String);
      const root = issuedById.get(ids[0] ?? '');
      if (root === undefined)
        return refuse(
          credentialRefusal(
            'not_issued',
            "the credential's root is not one this signer lists as issued; ask the operator for a credential",
          ),
        );
      const revokedRefusal = revocation(ids, revokedNow());
      if (revokedRefusal !== null) return refuse(revokedRefusal);
      const checks: string[][] = [];
      for (let i = 0; i < ids.length; i++) {
        const source = token.getBlockSource(i);
        checks.push(blockChecks(source));
        const problem = blockProblem(source, i === 0);
        if (problem !== null)
          return refuse(
            credentialRefusal(
              'block',
              `the credential's block ${i} holds ${problem}; a block may hold only checks on the facts docs/credentials.md lists`,
              { block: i },
            ),
          );
      }
      let live = true;
      const budgets = budgetsOf(ids, checks);
      // Every figure a budget check states (a block stating two keeps the smaller; both checks must hold).
      const statedOf = (of: (check: string) => number | null) =>
        new Set(
          checks
            .flat()
            .map(of)
            .filter((n): n is number => n !== null),
        );
      const stated: StatedBudgets = { lamports: statedOf(budgetOf), usd: statedOf(usdBudgetOf) };
      const usdBlock = checks.findIndex(limitsUsd);
      const credential: VerifiedCredential = {
        root,
        revocationIds: ids,
        id: ids[ids.length - 1] ?? '',
        checks,
        budgets,
        usdLimitedBy: usdBlock < 0 ? null : usdBlock,
        authorize: (req, now) => {
          if (!live) throw new Error('a credential is authorized after it was disposed');
          // Judged again later (after a simulation, after an approval's wait): a revocation since then refuses.
          const since = revocation(ids, revokedNow());
          if (since !== null) return since;
          return authorizeWith(token, req, now, stated);
        },
        dispose: () => {
          if (live) token.free();
          live = false;
        },
        get disposed() {
          return !live;
        },
      };
      return { ok: true, credential };
    },
  };
}
