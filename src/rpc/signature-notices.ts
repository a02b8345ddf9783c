/**
 * Notices that a sent transaction reached the cluster's commitment, pushed over WebSocket (signatureSubscribe)
 * rather than found by the next poll. A notice is a hint that wakes the confirmation loop early, never proof: the
 * loop then reads the status as it does on every poll, and only that read counts (flow/send-confirm.ts).
 *
 * The subscriptions (signature-subscriptions.ts, on Node's own WebSocket client) are loaded the first time a
 * transaction is followed, and never for a config that turns subscriptions off.
 */
import { clusterCommitment, clusterSubscribes, clusterWsUrls } from '../config/clusters';
import type { ClusterProfile, Timings } from '../config/types';
import type { NoticeEndpointEvent, SignatureNotices } from './notice-types';

export type { NoticeEndpointEvent, SignatureNotices } from './notice-types';

export interface SignatureNoticeOptions {
  onEndpoint?: (event: NoticeEndpointEvent) => void;
}

/** The notices a configured signer uses, or null when its cluster config turns subscriptions off. */
export function signatureNoticesFor(
  cluster: ClusterProfile,
  timings: Timings,
  opts: SignatureNoticeOptions = {},
): SignatureNotices | null {
  if (!clusterSubscribes(cluster)) return null;
  let open: SignatureNotices | null = null;
  let closed = false;
  const load = (): SignatureNotices => {
    if (open !== null) return open;
    /* eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded late on purpose: only a send needs it */
    const mod = require('./signature-subscriptions') as typeof import('./signature-subscriptions');
    return (open = mod.createSignatureSubscriptions({
      urls: clusterWsUrls(cluster),
      commitment: clusterCommitment(cluster),
      subscribeTimeoutMs: timings.rpc_timeout_ms,
      backoff: { baseMs: timings.rpc_backoff_base_ms, maxMs: timings.rpc_backoff_max_ms },
      ...(opts.onEndpoint === undefined ? {} : { onEndpoint: opts.onEndpoint }),
    }));
  };
  return {
    landed: (signature, signal) => (closed ? Promise.resolve(false) : load().landed(signature, signal)),
    close() {
      closed = true;
      open?.close();
    },
  };
}
