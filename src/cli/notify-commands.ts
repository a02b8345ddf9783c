/** `sa-forge-signer notify list`: the webhook outbox, newest first, and how many notifications stand in each status. */
import type { SignerConfig } from '../config/types';
import type { NotificationStatus } from '../ledger/types';
import { deliveryState, type NotificationView } from '../notify/view';
import { SignerError } from '../util/errors';
import { showUntrusted } from '../util/untrusted';
import { flag, option, type ParsedArgs } from './args';
import { err, out, outJson, withLedger } from './context';

const STATUSES: readonly NotificationStatus[] = ['pending', 'delivered', 'failed'];

function line(n: NotificationView): string {
  const state =
    n.status === 'delivered'
      ? `delivered ${n.settled_at ?? ''}`
      : n.status === 'failed'
        ? `FAILED after ${n.attempts} attempt(s) at ${n.settled_at ?? ''}`
        : `pending, ${n.attempts} attempt(s), next ${n.next_attempt_at ?? ''}`;
  const why = n.last_error === null || n.status === 'delivered' ? '' : `: ${showUntrusted(n.last_error, 200)}`;
  return `${n.created_at}  ${n.event}  key ${n.key ?? '-'}  to ${n.hook}  ${state}${why}  (${n.id})`;
}

export async function notifyList(cfg: SignerConfig, args: ParsedArgs): Promise<number> {
  const n = Number(option(args, 'n') ?? '20');
  if (!Number.isInteger(n) || n < 1)
    throw new SignerError('request_invalid', '-n takes a whole number of notifications');
  const status = option(args, 'status');
  if (status !== undefined && !(STATUSES as readonly string[]).includes(status))
    throw new SignerError('request_invalid', `--status takes ${STATUSES.join(', ')}`);
  const state = await withLedger(cfg, (l) =>
    deliveryState(l, { limit: n, ...(status === undefined ? {} : { status: status as NotificationStatus }) }),
  );
  if (flag(args, 'json')) {
    outJson(state);
    return 0;
  }
  const { pending, delivered, failed } = state.counts;
  err(`outbox: ${pending} pending, ${delivered} delivered, ${failed} failed`);
  if ((cfg.notify?.hooks ?? []).length === 0) err('no webhooks are configured (notify: in the config)');
  if (state.notifications.length > 0) out(state.notifications.map(line).join('\n'));
  return 0;
}
