/**
 * The words a credential may use: the facts the signer states about each request (its authorizer), and the
 * predicates a block's checks may name. One table, read by the verifier (which facts it adds), by the block check
 * below (which names a block may use) and by docs/credentials.md (the table agents need to write their own blocks
 * with any Biscuit library).
 *
 * A credential's blocks hold checks only (`check if`, `check all`, `reject if`): a check can only refuse, so a block
 * can narrow what its parent allows and never widen it. A block that states a fact or a rule, or names a predicate
 * outside the table, is refused as a whole rather than partly understood: a check the signer would never satisfy
 * is a typo to report, not a silent refusal of every request.
 */

export interface RequestFactSpec {
  predicate: string;
  /** The terms' Datalog types. */
  term: 'string' | 'date' | 'integer' | 'string, integer';
  /** When the signer states it and what it holds. */
  meaning: string;
}

/** The facts of a request, in the order the docs list them. */
export const REQUEST_FACTS = [
  {
    predicate: 'method',
    term: 'string',
    meaning: 'every request: its JSON-RPC method (`tools/call`, `tools/list`, `server/discover`, …)',
  },
  {
    predicate: 'tool',
    term: 'string',
    meaning: '`tools/call` only: the tool (`check`, `sign`, `key_show`, `halt`)',
  },
  {
    predicate: 'key',
    term: 'string',
    meaning:
      '`tools/call` only: the key the call uses (named, or each key the signer considers for a call that names none)',
  },
  {
    predicate: 'mode',
    term: 'string',
    meaning: '`sign` only: `send` or `sign_only`',
  },
  {
    predicate: 'time',
    term: 'date',
    meaning: "every request: the signer's clock (an agent's clock is never asked)",
  },
  {
    predicate: 'lamports_out',
    term: 'integer',
    meaning:
      '`check` and `sign`, after the simulation only: the lamports the key loses (fee included); limit it with `reject if`',
  },
  {
    predicate: 'usd_micros_out',
    term: 'integer',
    meaning:
      '`check` and `sign`, after the simulation, when the spend was valued: what the transaction takes out of the key in micro-dollars (1 USD = 1000000), the figure the ledger records; limit it with `reject if`',
  },
  {
    predicate: 'token_out',
    term: 'string, integer',
    meaning:
      '`check` and `sign`, after the simulation only, one fact per mint the key loses: the mint and its base units out (above 9007199254740991, that figure); limit it with `reject if token_out("MINT", $n), $n > N`',
  },
  {
    predicate: 'destination',
    term: 'string',
    meaning:
      'after the simulation only, one fact per account that gains lamports (the rent of a token account it creates aside); limit them with `reject if`',
  },
] as const satisfies readonly RequestFactSpec[];

/** The root block's own fact: the name the config lists the credential under (`serve.credentials.issued`). */
export const ROOT_PREDICATE = 'root';

/**
 * A block's daily lamport budget, stated as a check of one exact form, `check if per_day_lamports(N)`: the block's
 * intents may reserve and spend at most N lamports in 24 h, all keys together, counted by the signer in its ledger
 * under the block's revocation id. The signer states `per_day_lamports(N)` for every budget it read from the
 * credential and keeps, so the check holds exactly when the budget is kept; a signer that keeps no budgets states
 * nothing, and the check refuses. Any other use of the predicate would hold without binding anything: refused.
 */
export const BUDGET_PREDICATE = 'per_day_lamports';

/**
 * A block's daily dollar budget, the same way: `check if per_day_usd_micros(N)`, N whole micro-dollars (the unit the
 * ledger records each sign's value in, `usd_micros`), counted on what the block's intents recorded, never re-priced.
 */
export const USD_BUDGET_PREDICATE = 'per_day_usd_micros';

/** The one form a budget check takes; the figure is a whole number (of lamports, or of micro-dollars). */
const budgetCheck = (predicate: string): RegExp => new RegExp(`^check if ${predicate}\\((\\d{1,16})\\)$`);
const BUDGET_CHECK = budgetCheck(BUDGET_PREDICATE);
const USD_BUDGET_CHECK = budgetCheck(USD_BUDGET_PREDICATE);

/** The lamport budget a check states, or null for any other check. */
export function budgetOf(check: string): number | null {
  const n = BUDGET_CHECK.exec(check.trim())?.[1];
  return n === undefined ? null : Number(n);
}

/** The micro-dollar budget a check states, or null for any other check. */
export function usdBudgetOf(check: string): number | null {
  const n = USD_BUDGET_CHECK.exec(check.trim())?.[1];
  return n === undefined ? null : Number(n);
}

/** The predicate of a check that limits dollars per transaction (`reject if usd_micros_out($n), $n > N`). */
export const USD_OUT_PREDICATE = 'usd_micros_out';

/**
 * Whether a block's checks limit dollars (per transaction or per day): such a credential cannot let a sign through
 * whose spend was not valued, since a `reject if` on a fact never stated would pass it.
 */
export function limitsUsd(checks: readonly string[]): boolean {
  const named = new RegExp(`(?<![.\\w$:])(${USD_OUT_PREDICATE}|${USD_BUDGET_PREDICATE})\\(`);
  return checks.some((c) => named.test(c.replace(/"(?:[^"\\]|\\.)*"/g, '""')));
}

export type RequestPredicate = (typeof REQUEST_FACTS)[number]['predicate'];

/** The tools a credential can name (the MCP surface's, in its order). */
export const TOOLS = ['check', 'sign', 'key_show', 'halt'] as const;
export type ToolName = (typeof TOOLS)[number];

/** What a request says about itself, before the signer's clock is added. */
export interface CredentialRequest {
  method: string;
  /** Present for `tools/call`. */
  tool?: string;
  key?: string;
  /** Present for `sign`. */
  mode?: string;
  /** The simulation's figures, once there are any (`check` and `sign`). */
  spend?: SpendFacts;
}

/** What the simulation says a transaction moves, as the credential's checks see it. */
export interface SpendFacts {
  lamports_out: number;
  destinations: readonly string[];
  /** Micro-dollars out, when the spend was valued (absent: no `usd_micros_out` fact). */
  usd_micros_out?: number;
  /** Base units out of each mint the key loses (absent or empty: no `token_out` fact). */
  tokens_out?: readonly TokenOut[];
}

/** One mint the key loses in a transaction, as a `token_out` fact states it. */
export interface TokenOut {
  mint: string;
  /** Base units, capped at Number.MAX_SAFE_INTEGER (any limit a check can state refuses a larger figure alike). */
  amount: number;
}

export type FactTerm = { string: string } | { date: Date } | { integer: number } | { pair: readonly [string, number] };

/**
 * The authorizer's facts for a request at `now`: only those the request has (a missing one satisfies no check, and
 * matches no `reject if`: so a spend limit, written as `reject if`, holds once the simulation states the spend).
 */
export function requestFacts(req: CredentialRequest, now: Date): { predicate: RequestPredicate; term: FactTerm }[] {
  const facts: { predicate: RequestPredicate; term: FactTerm }[] = [
    { predicate: 'method', term: { string: req.method } },
  ];
  if (req.tool !== undefined) facts.push({ predicate: 'tool', term: { string: req.tool } });
  if (req.key !== undefined) facts.push({ predicate: 'key', term: { string: req.key } });
  if (req.mode !== undefined) facts.push({ predicate: 'mode', term: { string: req.mode } });
  facts.push({ predicate: 'time', term: { date: now } });
  if (req.spend !== undefined) {
    facts.push({ predicate: 'lamports_out', term: { integer: req.spend.lamports_out } });
    for (const d of new Set(req.spend.destinations)) facts.push({ predicate: 'destination', term: { string: d } });
    if (req.spend.usd_micros_out !== undefined)
      facts.push({ predicate: 'usd_micros_out', term: { integer: req.spend.usd_micros_out } });
    for (const t of req.spend.tokens_out ?? [])
      facts.push({ predicate: 'token_out', term: { pair: [t.mint, t.amount] } });
  }
  return facts;
}

/** Why a block's source is not one the signer accepts, or null when it is. */
export function blockProblem(source: string, authority: boolean): string | null {
  // String literals first: what they hold is data, never a statement or a predicate.
  const code = source.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  const allowed = new Set<string>(REQUEST_FACTS.map((f) => f.predicate));
  if (authority) allowed.add(ROOT_PREDICATE);
  for (const raw of code.split(';')) {
    const statement = raw.trim();
    if (statement === '') continue;
    const budget = budgetOf(statement) ?? usdBudgetOf(statement);
    if (budget !== null) {
      if (!Number.isSafeInteger(budget)) return 'a daily budget too large to count';
      continue;
    }
    for (const predicate of [BUDGET_PREDICATE, USD_BUDGET_PREDICATE])
      if (new RegExp(`(?<![.\\w$:])${predicate}\\(`).test(statement))
        return `a ${predicate} check not written as check if ${predicate}(N)`;
    const isCheck = /^(check if|check all|reject if)\s/.test(statement);
    // The root block states who it is (`root("name")`); every other statement anywhere is a check.
    const isRootFact = authority && new RegExp(`^${ROOT_PREDICATE}\\(""\\)$`).test(statement);
    if (!isCheck && !isRootFact) return `a statement that is not a check (${firstWords(statement)})`;
    // A predicate is a name followed by `(`; a method (`.contains(`) follows a dot.
    for (const m of statement.matchAll(/(?<![.\w$:])([A-Za-z_][A-Za-z0-9_:]*)\(/g)) {
      const name = m[1] ?? '';
      if (!allowed.has(name)) return `a predicate the signer does not state: ${name}`;
    }
  }
  return null;
}

/** The start of a statement for a message: bounded, its strings already emptied. */
function firstWords(statement: string): string {
  const s = statement.replace(/\s+/g, ' ');
  return s.length > 40 ? `${s.slice(0, 40)}…` : s;
}
