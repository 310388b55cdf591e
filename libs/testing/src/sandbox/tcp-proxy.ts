// A TCP forwarder a test can cut and restore, to give a real server (PostgreSQL) an outage that only
// the clients behind the proxy see: cutting closes every forwarded connection and refuses new ones. It
// records what clients sent, so a test can show a secret never crossed the wire.
import { connect, createServer, type Server, type Socket } from 'node:net';
import { freePort } from './nats-server.js';

/** A running proxy from `127.0.0.1:<port>` to a target port. */
export type TcpProxy = {
  readonly port: number;
  /** Destroys every open connection and stops listening: clients now get ECONNREFUSED. */
  cut(): Promise<void>;
  /** Listens again on the same port. */
  restore(): Promise<void>;
  /** Cuts and forgets the proxy. */
  dispose(): Promise<void>;
  /** Client connections accepted so far (a test of connection reuse counts them). */
  accepted(): number;
  /** Every byte the clients sent so far, in order (a test of what crossed the wire reads it). */
  sent(): Buffer;
};

/** Starts a proxy on a free local port that forwards to `127.0.0.1:<targetPort>`. */
export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  const port = await freePort();
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let accepted = 0;
  const chunks: Buffer[] = [];

  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };

  const listen = async (): Promise<void> => {
    const next = createServer((client) => {
      accepted += 1;
      const upstream = connect(targetPort, targetHost);
      track(client);
      track(upstream);
      client.on('data', (chunk: Buffer) => chunks.push(chunk));
      client.pipe(upstream);
      upstream.pipe(client);
      client.once('close', () => upstream.destroy());
      upstream.once('close', () => client.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      next.once('error', reject);
      next.listen(port, '127.0.0.1', () => resolve());
    });
    server = next;
  };

  const cut = async (): Promise<void> => {
    const current = server;
    server = undefined;
    for (const socket of sockets) socket.destroy();
    sockets.clear();
    if (current) await new Promise<void>((resolve) => current.close(() => resolve()));
  };

  await listen();
  return {
    port,
    cut,
    accepted: () => accepted,
    sent: () => Buffer.concat(chunks),
    restore: async () => {
      if (!server) await listen();
    },
    dispose: cut,
  };
}
