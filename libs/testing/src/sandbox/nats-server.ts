// A private nats-server (JetStream on) on a free port, for tests that stop and restart the broker.
// Storage lives in a temp dir that survives restarts, so streams come back with the server.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** A nats-server child process owned by a test. */
export type PrivateNatsServer = {
  readonly port: number;
  readonly url: string;
  /** The JetStream storage directory (`-sd`). */
  readonly storeDir: string;
  /** Stops the server (SIGTERM) and waits for the process to exit. */
  readonly stop: () => Promise<void>;
  /** Starts it again on the same port and storage directory. */
  readonly start: () => Promise<void>;
  /** Stops it and removes its storage directory. */
  readonly dispose: () => Promise<void>;
};

/** Asks the OS for a free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** True when `port` can be bound on 127.0.0.1 right now. */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * The first of `count` consecutive ports that are all free, for a program that listens on a base port and
 * the ones after it (the demo, the local stack). Drawn below the kernel's ephemeral range (32768 and up on
 * Linux): `freePort()` + 1 lies inside it, where outgoing connections and other tests' listeners take ports
 * at any moment (a demo run failed with EADDRINUSE on base + 1).
 */
export async function freePortBlock(count: number): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * (12_000 - count));
    let free = true;
    for (let port = base; free && port < base + count; port++) free = await bindable(port);
    if (free) return base;
  }
  throw new Error(`no ${count} consecutive free ports found between 20000 and 32000`);
}

/** Resolves once something accepts TCP connections on the port (or rejects after `timeoutMs`). */
export async function waitForPort(port: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = tcpConnect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on port ${port} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Options of {@link startPrivateNatsServer}. */
export type PrivateNatsServerOptions = {
  /**
   * A nats-server configuration file (`-c`), e.g. with users, permissions, TLS or `max_payload`. The
   * command line still sets JetStream, the address, the port and the storage directory.
   */
  readonly configFile?: string;
  /** Extra environment of the server process (a configuration may read `$VARIABLES`). */
  readonly env?: Readonly<Record<string, string>>;
  /** Extra command-line arguments, e.g. `['-l', logFile]`. */
  readonly args?: readonly string[];
};

/** Starts `nats-server -js -p <port> -sd <tmpdir>` and waits for it to accept connections. */
export async function startPrivateNatsServer(
  options: PrivateNatsServerOptions = {},
): Promise<PrivateNatsServer> {
  const port = await freePort();
  const storeDir = await mkdtemp(path.join(tmpdir(), 'rp-nats-'));
  let child: ChildProcess | undefined;
  const config = [...(options.configFile ? ['-c', options.configFile] : []), ...(options.args ?? [])];

  const start = async (): Promise<void> => {
    const args = [...config, '-js', '-a', '127.0.0.1', '-p', String(port), '-sd', storeDir];
    const proc = spawn('nats-server', args, {
      stdio: 'ignore',
      ...(options.env ? { env: { ...process.env, ...options.env } } : {}),
    });
    child = proc;
    const exitedEarly = new Promise<never>((_, reject) => {
      proc.once('exit', (code) => reject(new Error(`nats-server exited with ${code ?? 'a signal'}`)));
      proc.once('error', reject);
    });
    await Promise.race([waitForPort(port), exitedEarly]);
  };

  const stop = async (): Promise<void> => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      proc.once('exit', () => resolve());
      proc.kill('SIGTERM');
    });
  };

  await start();
  return {
    port,
    url: `nats://127.0.0.1:${port}`,
    storeDir,
    stop,
    start,
    dispose: async () => {
      await stop();
      await rm(storeDir, { recursive: true, force: true });
    },
  };
}
