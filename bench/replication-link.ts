/**
 * The network between a PostgreSQL standby and its primary, on loopback: a TCP forwarder the standby connects
 * through (its primary_conninfo names it), which the failover test can stop carrying the primary's bytes, as a
 * partition or a stalled link would. While held, what the primary sends is read by nobody: the WAL sender waits on
 * a full socket, as it does for any slow standby, holding no lock (a stopped process could hold one), and the
 * primary goes on acknowledging commits it waits for no standby for. The standby's own replies still pass, so the
 * primary does not time the standby out. Cutting the link drops what was held: a standby promoted after that never
 * has it.
 */
import net from 'node:net';

export interface ReplicationLink {
  readonly port: number;
  /** From now on nothing the primary sends reaches the standby (chunks already passed on are not called back). */
  hold(): void;
  /** Closes every connection through the link, dropping what was held; new connections are refused. */
  cut(): void;
  close(): Promise<void>;
}

export async function startReplicationLink(primaryPort: number): Promise<ReplicationLink> {
  const sockets = new Set<net.Socket>();
  let held = false;
  let cut = false;
  const track = (s: net.Socket): void => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => s.destroy());
  };
  const server = net.createServer((standby) => {
    track(standby);
    if (cut) return void standby.destroy();
    const primary = net.connect({ host: '127.0.0.1', port: primaryPort });
    track(primary);
    primary.on('data', (chunk: Buffer) => {
      if (held) {
        // read no further: the primary's socket fills and its sender waits, as on a stalled link
        primary.pause();
        return;
      }
      standby.write(chunk);
    });
    standby.on('data', (chunk: Buffer) => primary.write(chunk));
    primary.on('close', () => standby.destroy());
    standby.on('close', () => primary.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const cutAll = (): void => {
    cut = true;
    for (const s of sockets) s.destroy();
  };
  return {
    port: (server.address() as net.AddressInfo).port,
    hold() {
      held = true;
    },
    cut: cutAll,
    close() {
      cutAll();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
