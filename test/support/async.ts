import type { AuditEntry, Ledger } from '../../src/ledger/types';
import type { Report } from '../../src/signer/report';
import type { SignerEngine, SignInput, SignProgress } from '../../src/signer/types';

/** True if `p` is still pending after `ms` (a lock still waited for, a sign still held). */
export async function stillPending(p: Promise<unknown>, ms: number): Promise<boolean> {
  let settled = false;
  p.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((r) => setTimeout(r, ms));
  return !settled;
}

/** Resolves with the approval id once a sign's progress events report that it waits for an operator. */
export function approvalId(events: readonly SignProgress[]): Promise<string> {
  return new Promise<string>((resolve) => {
    const tick = setInterval(() => {
      const a = events.find((e): e is Extract<SignProgress, { stage: 'approval' }> => e.stage === 'approval');
      if (a) {
        clearInterval(tick);
        resolve(a.approval_id);
      }
    }, 5);
  });
}

/**
 * Starts a sign that waits for operators; resolves once it does, with the approval's id and the sign's report to
 * come.
 */
export async function signAwaitingApproval(
  engine: SignerEngine,
  input: Omit<SignInput, 'onProgress'>,
): Promise<{ id: string; done: Promise<Report> }> {
  const events: SignProgress[] = [];
  const done = engine.sign({ ...input, onProgress: (e) => events.push(e) });
  return { id: await approvalId(events), done };
}

/**
 * Resolves once `condition` holds (a ledger row written, a count reached), checking it again `everyMs` after each
 * check settles; rejects naming `what` if it has not held within `timeoutMs` (a bound for a broken run, not a
 * timing). A long wait on a costly check may check less often.
 */
export async function until(
  condition: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 30_000,
  everyMs = 5,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * Resolves with the first answer of `ask` that `done` accepts, asking again right after each answer (a state that
 * changes outside the test, such as a token coming back, has no event of its own to wait for).
 */
export async function firstAnswer<T>(
  ask: () => Promise<T>,
  done: (answer: T) => boolean,
  what = 'an answer',
): Promise<T> {
  let answer: T | undefined;
  await until(async () => {
    answer = await ask();
    return done(answer);
  }, what);
  return answer as T;
}

/** The final `sign` entry of a signature, once the flow or the watcher has written it (`timeoutMs` bounds a broken run). */
export async function finalEntry(
  ledger: Pick<Ledger, 'entries'>,
  signature: string,
  timeoutMs = 30_000,
): Promise<AuditEntry> {
  let final: AuditEntry | undefined;
  await until(
    async () => {
      for await (const e of ledger.entries()) if (e.signature === signature && e.command === 'sign') final = e;
      return final !== undefined;
    },
    `the final entry of ${signature}`,
    timeoutMs,
  );
  return final as AuditEntry;
}
