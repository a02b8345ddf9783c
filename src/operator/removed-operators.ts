/**
 * Operators a reload drops lose their console logins with it, in every replica (the logins are the ledger's), so a
 * saved cookie does not open the console again if the name is configured later. Best effort: while they are not
 * configured, each of their requests is refused anyway, and its login ended (middleware/require-operator.ts).
 */
import type { OperatorConfig } from '../config/types';
import type { Ledger } from '../ledger/types';
import { errorMessage } from '../util/errors';

export async function endRemovedOperatorsLogins(
  ledger: Ledger,
  before: readonly OperatorConfig[],
  after: readonly OperatorConfig[],
  log: { error(obj: object, msg?: string): void },
): Promise<void> {
  for (const { name } of before.filter((o) => !after.some((a) => a.name === o.name))) {
    await ledger.endSessionsOf(name).catch((e: unknown) => {
      log.error({ operator: name, err: errorMessage(e) }, 'could not end the console logins of a removed operator');
    });
  }
}
