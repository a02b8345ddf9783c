/**
 * The embedded chain's WebSocket endpoint, on the HTTP port's upgrade as a node serves it: `signatureSubscribe` and
 * `signatureUnsubscribe` with Agave's messages. A subscription is one-shot: once the signature's status reaches the
 * subscribed commitment (`finalized` unless asked otherwise) one `signatureNotification` carrying its error goes out
 * and the subscription ends; nothing is sent for a status reached before the subscription, as on a node. Other
 * methods answer -32601; messages without an id (a client's keep-alive pings) get no answer. Notifications go out
 * when statuses move (a block, a landed send), never in the same instant as the subscription's acknowledgement.
 *
 * The faults (faults.ts) act here: cut sockets refuse upgrades and close every connection, dropped notifications
 * end their subscription silently, false notifications claim a signature landed at the next status move although
 * its status has not reached the commitment, and a restart closes every connection (code 1012) with its subscriptions, then accepts new ones.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Commitment, EmbeddedChain } from './embedded-chain';

const MAX_MESSAGE_BYTES = 64 * 1024;
/** Close code of a server going away for a restart (RFC 6455 registry). */
const SERVICE_RESTART = 1012;
const RANK: Record<Commitment, number> = { processed: 0, confirmed: 1, finalized: 2 };

/** What the tests read: how the endpoint has been used, and the signatures subscribed to now. */
export interface PubsubStats {
  connections: number;
  subscribes: number;
  notifications: number;
  dropped: number;
  false_notifications: number;
  watching: string[];
}

/** The switches faults.ts sets. */
export interface PubsubFaults {
  readonly socketsCut: boolean;
  readonly notificationsDropped: boolean;
  readonly notificationsFalse: boolean;
}

interface Subscription {
  id: number;
  signature: string;
  commitment: Commitment;
  socket: WebSocket;
}

export interface SignaturePubsub {
  /** The HTTP server's `upgrade` handler. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Closes every connection and forgets its subscriptions (a restart of the WebSocket server). */
  restart(): void;
  /** Ends every connection at once with no close handshake, as a cut network does. */
  cut(): void;
  stats(): PubsubStats;
  close(): void;
}

export function createSignaturePubsub(chain: EmbeddedChain, faults: PubsubFaults): SignaturePubsub {
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  const subscriptions = new Map<number, Subscription>();
  const counts = { connections: 0, subscribes: 0, notifications: 0, dropped: 0, false_notifications: 0 };
  let nextId = 0;

  const send = (socket: WebSocket, message: unknown): void => {
    if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
  };
  const notify = (s: Subscription, err: unknown): void => {
    subscriptions.delete(s.id);
    send(s.socket, {
      jsonrpc: '2.0',
      method: 'signatureNotification',
      params: { result: { context: { slot: chain.slot }, value: { err } }, subscription: s.id },
    });
  };

  const stopWatching = chain.onStatusesMoved(() => {
    for (const s of [...subscriptions.values()]) {
      const status = chain.status(s.signature, false);
      if (!status || RANK[status.confirmationStatus] < RANK[s.commitment]) {
        if (faults.notificationsFalse) {
          counts.false_notifications++;
          notify(s, null);
        }
        continue;
      }
      if (faults.notificationsDropped) {
        subscriptions.delete(s.id);
        counts.dropped++;
        continue;
      }
      counts.notifications++;
      notify(s, status.err);
    }
  });

  const answer = (socket: WebSocket, raw: string): void => {
    let request: unknown;
    try {
      request = JSON.parse(raw);
    } catch {
      send(socket, { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null });
      return;
    }
    if (typeof request !== 'object' || request === null) return;
    const { method, params, id } = request as Record<string, unknown>;
    if (typeof id !== 'number' && typeof id !== 'string') return;
    const reply = (result: unknown): void => send(socket, { jsonrpc: '2.0', result, id });
    const error = (code: number, message: string): void =>
      send(socket, { jsonrpc: '2.0', error: { code, message }, id });
    const list = Array.isArray(params) ? (params as unknown[]) : [];
    if (method === 'signatureSubscribe') {
      const [signature, config] = list;
      const asked = (config as { commitment?: unknown } | undefined)?.commitment ?? 'finalized';
      if (typeof signature !== 'string' || !(typeof asked === 'string' && asked in RANK)) {
        error(-32602, 'Invalid params');
        return;
      }
      const s: Subscription = { id: nextId++, signature, commitment: asked as Commitment, socket };
      subscriptions.set(s.id, s);
      counts.subscribes++;
      reply(s.id);
      return;
    }
    if (method === 'signatureUnsubscribe') {
      const [sub] = list;
      const own = typeof sub === 'number' && subscriptions.get(sub)?.socket === socket;
      if (own) subscriptions.delete(sub);
      if (own) reply(true);
      else error(-32602, 'Invalid subscription id.');
      return;
    }
    error(-32601, 'Method not found');
  };

  wss.on('connection', (socket: WebSocket) => {
    counts.connections++;
    socket.on('message', (data: Buffer, isBinary: boolean) => {
      if (!isBinary) answer(socket, data.toString('utf8'));
    });
    socket.on('close', () => {
      for (const s of subscriptions.values()) if (s.socket === socket) subscriptions.delete(s.id);
    });
    socket.on('error', () => socket.terminate());
  });

  const closeAll = (code: number): void => {
    for (const client of wss.clients) client.close(code, 'restart');
    subscriptions.clear();
  };

  return {
    upgrade(req, socket, head) {
      if (faults.socketsCut) {
        socket.destroy();
        return;
      }
      wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
    },
    restart: () => closeAll(SERVICE_RESTART),
    cut() {
      for (const client of wss.clients) client.terminate();
      subscriptions.clear();
    },
    stats: () => ({ ...counts, watching: [...subscriptions.values()].map((s) => s.signature) }),
    close() {
      stopWatching();
      this.cut();
      wss.close();
    },
  };
}
