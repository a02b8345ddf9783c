/**
 * `audit verify`'s verdict as the console shows it. Verifying walks the whole chain, so its cost grows with every
 * entry the ledger ever took: a console that verified on each page load would get slower every day and let a few
 * open tabs keep the ledger busy. The console keeps the last verdict with the time its walk began and serves it
 * while it is younger than VERDICT_MAX_AGE_S; an older one is still shown (with its age) while a new walk runs, and
 * the page after that shows the new verdict. Only the first page load waits for a walk, and never two walks run
 * at once. `sa-forge-signer audit verify` always walks the chain there and then.
 */
import type { Logger } from 'pino';
import type { Ledger, VerifyResult } from '../ledger/types';
import { errorMessage } from '../util/errors';

export const VERDICT_MAX_AGE_S = 60;

export interface AuditVerdict {
  result: VerifyResult;
  /** Unix seconds at which the walk that gave it began: everything written before then was checked. */
  checkedAt: number;
}

export class AuditVerdicts {
  private last: AuditVerdict | null = null;
  private walking: Promise<AuditVerdict> | null = null;

  constructor(
    private readonly log: Logger,
    private readonly maxAgeS = VERDICT_MAX_AGE_S,
  ) {}

  /** The verdict to show at `now` (unix seconds). */
  async current(ledger: Ledger, now: number): Promise<AuditVerdict> {
    const last = this.last;
    if (last === null) return await this.walk(ledger, now);
    if (now - last.checkedAt >= this.maxAgeS)
      // A failed walk keeps the last verdict on show, its age telling how old it is.
      this.walk(ledger, now).catch((e: unknown) =>
        this.log.error({ err: errorMessage(e) }, 'the console could not verify the audit chain'),
      );
    return last;
  }

  private walk(ledger: Ledger, now: number): Promise<AuditVerdict> {
    this.walking ??= ledger
      .verify()
      .then((result) => (this.last = { result, checkedAt: now }))
      .finally(() => {
        this.walking = null;
      });
    return this.walking;
  }
}
