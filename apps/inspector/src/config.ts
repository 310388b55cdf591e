// Environment variables of the inspector, validated at start (see README "Configuration").
// Shared ones come from baseEnvSpec; the inspector's own variables tune replies and target pools.
import { keyPairFromPrivateKey, type ReplyKeyPair } from '@rolepolicy/contracts';
import {
  baseEnvSpec,
  cloudIdentityEnvSpec,
  databaseTlsEnvSpec,
  DEFAULT_HTTP_PORTS,
  env,
  type ConfigOf,
  type EnvVar,
} from '@rolepolicy/runtime';

/**
 * The inspectors' private key (base64 PKCS#8 DER of an X25519 key; `deploy/nats/generate.sh` makes one):
 * it opens the connection sealed in each request (ADR 0024). Required: a request is never sent in clear.
 */
function sealPrivateKey(): EnvVar<ReplyKeyPair> {
  return {
    doc: 'Private key (base64 PKCS#8 DER, X25519) that opens the connection sealed in each inspect request; the planner seals to its public half (INSPECT_SEAL_PUBLIC_KEY)',
    parse: (raw) => {
      try {
        return { ok: true, value: keyPairFromPrivateKey(raw.trim()) };
      } catch {
        return { ok: false, error: 'must be an X25519 private key (PKCS#8 DER, base64)' };
      }
    },
  };
}

/** Every variable the inspector reads. */
export const inspectorEnvSpec = {
  ...baseEnvSpec(DEFAULT_HTTP_PORTS['inspector']),
  ...cloudIdentityEnvSpec(),
  ...databaseTlsEnvSpec(),
  INSPECT_SEAL_PRIVATE_KEY: sealPrivateKey(),
  INSPECT_REQUEST_SUBJECT: env.text(
    'Subject the inspector answers snapshot requests on',
    'rp.inspect.request',
  ),
  INSPECT_INLINE_MAX_BYTES: env.positiveInt(
    'Largest snapshot (JSON bytes) sent inline in the reply; larger ones go to the object store',
    262_144,
  ),
  INSPECT_OBJECT_BUCKET: env.text('JetStream object store bucket for large snapshots', 'rp-snapshots', 64),
  INSPECT_MAX_TARGET_POOLS: env.positiveInt(
    'Connection pools kept open (one per target, least recently used closed first)',
    32,
  ),
  INSPECT_CONCURRENCY: env.intInRange(
    'Inspections one replica runs at once (each holds database connections); the others wait their turn',
    1,
    64,
    8,
  ),
  INSPECT_SERVER_SESSIONS: env.intInRange(
    'Sessions one replica holds on one PostgreSQL server (host:port) at most, across its databases, warm idle ' +
      'ones included: inspections beyond it wait without a connection, and the least recently used warm pool ' +
      'of another database of the server is closed to make room. Default 32, as INSPECT_MAX_TARGET_POOLS: the ' +
      'warm sessions of one server are never churned below the pool bound (8 made every activation of a ' +
      '20-database server reconnect: docs/inspector.md); keep replicas x this below max_connections, with room ' +
      'for the executors',
    1,
    64,
    32,
  ),
} as const;

/** The inspector's validated configuration. */
export type InspectorConfig = ConfigOf<typeof inspectorEnvSpec>;
