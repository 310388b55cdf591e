// A local webhook receiver for the notification tests (node:http): records every POST with its headers and body,
// can answer 500 a given number of times or refuse a path with 4xx, and can go down and come back on its port.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One POST the receiver got, and what it answered. */
export type Received = {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly status: number;
};

/** A running receiver. */
export class WebhookReceiver {
  readonly received: Received[] = [];
  private failures = 0;
  private refusePaths = new Set<string>();
  private server: Server | undefined;
  private port = 0;

  /** The URL of `path` on this receiver. */
  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Starts listening (on the same port again after {@link down}). */
  async up(): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = req.url ?? '';
        let status = 200;
        if (this.refusePaths.has(path)) status = 410;
        else if (this.failures > 0) {
          this.failures--;
          status = 500;
        }
        this.received.push({
          path,
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          status,
        });
        res.writeHead(status).end();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Stops listening: connections are refused until {@link up}. */
  async down(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The next `count` POSTs (any path) are answered 500. */
  failNext(count: number): void {
    this.failures = count;
  }

  /** POSTs to `path` are answered 410 Gone (a permanent refusal) from now on. */
  refuse(path: string): void {
    this.refusePaths.add(path);
  }

  /** The accepted (2xx) POSTs to `path`. */
  accepted(path: string): Received[] {
    return this.received.filter((r) => r.path === path && r.status < 300);
  }
}
