/**
 * The watcher's subscriptions to the cluster's notices that a watched signature landed (signatureSubscribe). A
 * notice only brings the next poll forward (`onLanded`): the poll's status read decides, so a notice the read
 * contradicts changes nothing, and with the socket down the timed polls alone find the outcome.
 */
import type { SignatureNotices } from '../../rpc/notice-types';
import type { WatchedSign } from './intent-watch';

/**
 * Signatures subscribed to at once, at most: past that (a flood of sign-only transactions nobody sends) the others
 * are found by the timed polls alone, and a provider's limit of subscriptions per connection is not reached.
 */
const MAX_FOLLOWED = 256;

export interface Following {
  /**
   * Subscribes to `w`'s notices where a notice can name it: its id is the key's own signature (not a foreign fee
   * payer's), and it was signed just now (an orphan may have landed long ago, which a node sends no notice of).
   */
  follow(w: WatchedSign): void;
  unfollow(signature: string): void;
  /** Ends every subscription. */
  close(): void;
}

/** `onLanded` hears of a signature still `watched` when its notice comes; null notices: polling only. */
export function createFollowing(
  notices: SignatureNotices | null,
  watched: (signature: string) => boolean,
  onLanded: () => void,
): Following {
  /** Subscriptions to watched signatures' notices, by signature; each ended once its signature is no longer watched. */
  const following = new Map<string, AbortController>();
  let closed = false;
  const unfollow = (signature: string): void => {
    following.get(signature)?.abort();
    following.delete(signature);
  };
  return {
    follow(w) {
      if (notices === null || closed || w.orphan || w.feePayer !== null) return;
      if (following.has(w.signature) || following.size >= MAX_FOLLOWED) return;
      const stop = new AbortController();
      following.set(w.signature, stop);
      void notices.landed(w.signature, stop.signal).then((landed) => {
        if (following.get(w.signature) === stop) following.delete(w.signature);
        if (!landed || !watched(w.signature)) return;
        onLanded();
      });
    },
    unfollow,
    close() {
      closed = true;
      for (const signature of [...following.keys()]) unfollow(signature);
    },
  };
}
