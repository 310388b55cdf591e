// Unique JetStream names per test file: stream, durable and subject root, so tests never collide with
// each other or with the `rp.>` streams that running services ensure on the same server.
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { sandboxId } from './ids.js';

/** NATS URL of the shared local server, overridable with RP_TEST_NATS_URL. */
export function localNatsUrl(): string {
  return process.env['RP_TEST_NATS_URL'] ?? 'nats://127.0.0.1:4222';
}

/** Names scoped to one test file, plus a connection to clean up with. */
export type NatsSandbox = {
  readonly id: string;
  readonly url: string;
  /** Subject under the sandbox root, e.g. `subject('work')` -> `sbx_<id>.work`. */
  readonly subject: (rest: string) => string;
  /** Stream name, e.g. `stream('work')` -> `SBX_<ID>_WORK`. */
  readonly stream: (name: string) => string;
  /** Durable consumer name, e.g. `durable('worker')` -> `sbx_<id>_worker`. */
  readonly durable: (name: string) => string;
  /** Deletes every stream this sandbox named and closes its connection. */
  readonly cleanup: () => Promise<void>;
};

/** Creates a NATS sandbox on the local server (or `url`). */
export async function createNatsSandbox(url: string = localNatsUrl()): Promise<NatsSandbox> {
  const id = sandboxId();
  const streams = new Set<string>();
  return {
    id,
    url,
    subject: (rest) => `sbx_${id}.${rest}`,
    stream: (name) => {
      const full = `SBX_${id}_${name}`.toUpperCase();
      streams.add(full);
      return full;
    },
    durable: (name) => `sbx_${id}_${name}`,
    cleanup: async () => {
      const nc: NatsConnection = await connect({ servers: url });
      try {
        const jsm = await jetstreamManager(nc);
        for (const name of streams) await jsm.streams.delete(name).catch(() => false);
      } finally {
        await nc.close();
      }
    },
  };
}
