// A private nats-server running deploy/nats/nats-server.conf as shipped: TLS from deploy/nats/generate.sh,
// one user per service, JetStream encrypted at rest. Tests connect as a service and read the server log
// for permission violations.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { startPrivateNatsServer, type PrivateNatsServer } from './nats-server.js';

const DEPLOY = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../deploy/nats');

/** The five service users of the configuration. */
export const NATS_SERVICE_USERS = [
  'k8s-gateway',
  'planner',
  'inspector',
  'executor',
  'access-scheduler',
] as const;

/** One of {@link NATS_SERVICE_USERS}. */
export type NatsServiceUser = (typeof NATS_SERVICE_USERS)[number];

/** A running access-controlled nats-server. */
export type SecuredNatsServer = {
  readonly server: PrivateNatsServer;
  /** The CA that signed the server certificate. */
  readonly caFile: string;
  /** The variables a service needs to connect as its user (NATS_URL, NATS_USER, NATS_PASSWORD, NATS_TLS_CA_FILE). */
  env(service: NatsServiceUser): Record<string, string>;
  /** Connects as the service would (its user, TLS, its private inbox prefix); `inboxPrefix` overrides. */
  connect(service: NatsServiceUser, options?: { readonly inboxPrefix?: string }): Promise<NatsConnection>;
  /** Lines of the server log that report a permission violation. */
  violations(): Promise<string[]>;
  /** Stops the server and removes its files. */
  dispose(): Promise<void>;
};

/** Reads `KEY=value` lines. */
function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const match = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (match) out[match[1]!] = match[2]!;
  }
  return out;
}

/** Generates fresh TLS material and secrets and starts nats-server with the shipped configuration. */
export async function startSecuredNatsServer(): Promise<SecuredNatsServer> {
  const dir = await mkdtemp(path.join(tmpdir(), 'rp-nats-access-'));
  await promisify(execFile)('sh', [path.join(DEPLOY, 'generate.sh'), dir, 'localhost']);
  const secrets = parseEnvFile(await readFile(path.join(dir, 'nats.env'), 'utf8'));
  const logFile = path.join(dir, 'nats.log');
  const caFile = path.join(dir, 'ca.pem');
  const server = await startPrivateNatsServer({
    configFile: path.join(DEPLOY, 'nats-server.conf'),
    args: ['-l', logFile],
    env: {
      ...secrets,
      RP_NATS_TLS_CERT: path.join(dir, 'server-cert.pem'),
      RP_NATS_TLS_KEY: path.join(dir, 'server-key.pem'),
      RP_NATS_TLS_CA: caFile,
    },
  });
  const password = (service: NatsServiceUser): string => {
    const value = secrets[`RP_NATS_PASSWORD_${service.toUpperCase().replace(/-/g, '_')}`];
    if (!value) throw new Error(`generate.sh wrote no password for ${service}`);
    return value;
  };
  return {
    server,
    caFile,
    env: (service) => ({
      NATS_URL: `tls://127.0.0.1:${server.port}`,
      NATS_USER: service,
      NATS_PASSWORD: password(service),
      NATS_TLS_CA_FILE: caFile,
    }),
    connect: (service, options = {}) =>
      connect({
        servers: `tls://127.0.0.1:${server.port}`,
        user: service,
        pass: password(service),
        tls: { caFile },
        inboxPrefix: options.inboxPrefix ?? `_INBOX_${service}`,
        maxReconnectAttempts: 0,
      }),
    violations: async () =>
      (await readFile(logFile, 'utf8').catch(() => '')).split('\n').filter((line) => /violation/i.test(line)),
    dispose: async () => {
      await server.dispose();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
