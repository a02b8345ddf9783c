/**
 * Notifications to a hook nobody listens on (port 9 on loopback): a test reads what the signer would send from the
 * ledger's outbox, where the engine writes it, and one quick delivery attempt keeps the deliverer out of the way.
 */
import { hookId } from '../../src/config/load';
import { NOTIFY_EVENTS, type NotifyConfig } from '../../src/config/types';
import type { NotifyEvent } from '../../src/config/sections/notify';

export function outboxOnlyNotify(path: string, events: readonly NotifyEvent[] = NOTIFY_EVENTS): NotifyConfig {
  const url = `http://127.0.0.1:9/${path}`;
  return {
    hooks: [{ id: hookId(url), url, events: [...events], secret_file: null, format: 'standard' }],
    delivery: {
      timeout_ms: 1_000,
      max_attempts: 1,
      max_age_hours: 1,
      backoff_base_ms: 20,
      backoff_max_ms: 20,
      poll_ms: 20,
    },
  };
}
