/** What the confirmation loop asks of pushed notices (signature-notices.ts), apart from how they are made. */
/** A WebSocket endpoint went down (the subscriptions then wait out a backoff) or answered again. */
export interface NoticeEndpointEvent {
  /** Scheme, host and port only: safe to log (providers put API keys in paths and queries). */
  endpoint: string;
  state: 'down' | 'up';
  detail: string | null;
}

export interface SignatureNotices {
  /**
   * Resolves true when the endpoint notifies that `signature` reached the commitment, false once `signal` ends the
   * wait or the notices are closed. Never rejects: a socket that is down only means no notice comes.
   */
  landed(signature: string, signal: AbortSignal): Promise<boolean>;
  close(): void;
}
