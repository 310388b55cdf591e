// JetStream streams and durable consumers of the spine, declared as plain data.
// ensureTopology() creates them idempotently at start; tests build their own with sandbox names.
import { SUBJECTS } from './subjects.js';

/** A JetStream stream to create or update at start. */
export type StreamDefinition = {
  readonly name: string;
  readonly subjects: readonly string[];
  /** `workqueue`: a message is removed once acked (one consumer per subject); `limits`: kept until max age. */
  readonly retention: 'limits' | 'workqueue';
  readonly maxAgeMs: number;
  /** Window in which a repeated `Nats-Msg-Id` is dropped as a duplicate. */
  readonly duplicateWindowMs: number;
  /** Messages kept per subject (oldest dropped first); absent: unlimited. */
  readonly maxMsgsPerSubject?: number;
};

/** A durable pull consumer; every replica of a service binds the same durable, so replicas split the work. */
export type ConsumerDefinition = {
  readonly stream: string;
  readonly durable: string;
  readonly filterSubject: string;
  /** How long a delivered message may stay unacked before JetStream redelivers it elsewhere. */
  readonly ackWaitMs: number;
  /** Deliveries before the transport gives up and dead-letters the message. */
  readonly maxDeliver: number;
  /** Unacked messages the server hands out across all replicas at once. */
  readonly maxAckPending: number;
};

/** Streams and consumers to ensure, as one value. */
export type Topology = {
  readonly streams: readonly StreamDefinition[];
  readonly consumers: readonly ConsumerDefinition[];
};

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

/** Stream names of the spine. */
export const STREAMS = {
  resources: 'RP_RESOURCES',
  k8sCommands: 'RP_K8S_COMMANDS',
  execute: 'RP_EXECUTE',
  deadLetter: 'RP_DEAD_LETTER',
} as const;

/** Every stream of the spine; each service ensures all of them so start order does not matter. */
export const SPINE_STREAMS: readonly StreamDefinition[] = [
  // Informer semantics (ADR 0005): the latest state per object (deletes as tombstones) and the latest resync
  // marker chunk per kind; nothing older. Republished on every resync, so a day's age limit only clears ghosts.
  {
    name: STREAMS.resources,
    subjects: [SUBJECTS.resourceAll],
    retention: 'limits',
    maxAgeMs: DAY,
    duplicateWindowMs: 2 * MINUTE,
    maxMsgsPerSubject: 1,
  },
  {
    name: STREAMS.k8sCommands,
    subjects: [SUBJECTS.k8sCommandAll],
    retention: 'workqueue',
    maxAgeMs: 7 * DAY,
    duplicateWindowMs: 2 * MINUTE,
  },
  {
    name: STREAMS.execute,
    subjects: [SUBJECTS.executeAll],
    retention: 'workqueue',
    maxAgeMs: 7 * DAY,
    duplicateWindowMs: 2 * MINUTE,
  },
  {
    name: STREAMS.deadLetter,
    subjects: [SUBJECTS.deadLetterAll],
    retention: 'limits',
    maxAgeMs: 14 * DAY,
    duplicateWindowMs: 2 * MINUTE,
  },
];

/** Durable consumers of each service, keyed by service name. */
export const SPINE_CONSUMERS = {
  'k8s-gateway': [
    {
      stream: STREAMS.k8sCommands,
      durable: 'k8s-gateway-commands',
      filterSubject: SUBJECTS.k8sCommandAll,
      ackWaitMs: 30_000,
      maxDeliver: 5,
      maxAckPending: 256,
    },
  ],
  inspector: [],
  // The planner reads resources through an ordered ResourceCache consumer (no durable); it consumes the
  // executor's results, the only consumer of that subject on the RP_EXECUTE work queue.
  planner: [
    {
      stream: STREAMS.execute,
      durable: 'planner-execute-results',
      filterSubject: SUBJECTS.executeResult,
      ackWaitMs: 60_000,
      maxDeliver: 5,
      maxAckPending: 64,
    },
  ],
  // Executions hold a database lock for a while: in-progress heartbeats (every ack wait / 3) keep a running
  // one from being redelivered, so the ack wait only decides how soon a killed replica's work moves on. A
  // redelivery that does race a live execution is harmless: it waits for the database lock and then finds the
  // plan terminal (executor.md).
  executor: [
    {
      stream: STREAMS.execute,
      durable: 'executor-execute',
      filterSubject: SUBJECTS.executeRequest,
      ackWaitMs: 30_000,
      maxDeliver: 5,
      // Every replica pulls one message per free slot (EXECUTOR_CONCURRENCY, at most 32), never more.
      maxAckPending: 256,
    },
    // Ephemeral access plans: same lock as policy executions, their own durable so neither queue waits on the other.
    {
      stream: STREAMS.execute,
      durable: 'executor-scoped',
      filterSubject: SUBJECTS.scopedExecuteRequest,
      ackWaitMs: 30_000,
      maxDeliver: 10,
      maxAckPending: 64,
    },
    // Revocations: their own durable (and pull slots), so a revoke never waits behind activations (ADR 0013).
    {
      stream: STREAMS.execute,
      durable: 'executor-scoped-revoke',
      filterSubject: SUBJECTS.scopedRevokeRequest,
      ackWaitMs: 30_000,
      maxDeliver: 10,
      // Slots per replica: EXECUTOR_REVOKE_CONCURRENCY (default 8, at most 32), so 8 replicas at the default.
      maxAckPending: 64,
    },
  ],
  'access-scheduler': [
    {
      stream: STREAMS.resources,
      durable: 'access-scheduler-resources',
      filterSubject: SUBJECTS.resourceAll,
      ackWaitMs: 60_000,
      maxDeliver: 5,
      maxAckPending: 256,
    },
    {
      stream: STREAMS.execute,
      durable: 'access-scheduler-scoped-results',
      filterSubject: SUBJECTS.scopedExecuteResult,
      ackWaitMs: 60_000,
      maxDeliver: 5,
      maxAckPending: 64,
    },
  ],
} as const satisfies Readonly<Record<string, readonly ConsumerDefinition[]>>;

/** Names of the five services. */
export type ServiceName = keyof typeof SPINE_CONSUMERS;

/**
 * The one service whose NATS user creates and updates the spine streams and every durable consumer (ADR
 * 0022); the others only bind to what it created, so no other user holds STREAM.CREATE/UPDATE or
 * CONSUMER.CREATE of a durable, and none can rewire a stream into another's subjects.
 */
export const TOPOLOGY_OWNER: ServiceName = 'k8s-gateway';

/** Every durable consumer of every service. */
export const ALL_SPINE_CONSUMERS: readonly ConsumerDefinition[] = Object.values(SPINE_CONSUMERS).flat();

/**
 * The topology of one service at start: the owner ensures every stream and every durable consumer; any
 * other service binds to every stream and to its own consumers (waits until they exist).
 */
export function serviceTopology(service: ServiceName): Topology {
  return {
    streams: SPINE_STREAMS,
    consumers: service === TOPOLOGY_OWNER ? ALL_SPINE_CONSUMERS : SPINE_CONSUMERS[service],
  };
}
