import type { SignProgress } from '../../src/signer/types';

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
 * Resolves with the first answer of `ask` that `done` accepts, asking again right after each answer (a state that
 * changes outside the test, such as a token coming back, has no event of its own to wait for). The test's own
 * timeout bounds it.
 */
export async function firstAnswer<T>(ask: () => Promise<T>, done: (answer: T) => boolean): Promise<T> {
  for (;;) {
    const answer = await ask();
    if (done(answer)) return answer;
    await new Promise((r) => setTimeout(r, 10));
  }
}
