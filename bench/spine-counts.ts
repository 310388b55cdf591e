// The spine floor's arithmetic (spine-floor.ts): which transport work of a fleet stage the floor repeats, how
// it is shared out over the floor's policies, and the figures read from the floor and the idle baseline. Pure.

/**
 * The resource kinds each service's ResourceCache follows, one ordered consumer per kind, as the services
 * start it: apps/planner/src/reconcile/planner-host.ts and apps/executor/src/execution/execution-cluster.ts
 * (ResourceCache.start). The inspector and the k8s-gateway follow no kind (the gateway publishes them); the
 * access-scheduler follows kinds too but is not started on the fleet's path. Kept here by hand (bench code
 * does not import apps): a service that starts following another kind must be added here, or the floor
 * under-counts its deliveries.
 */
export const FOLLOWED_KINDS = {
  planner: [
    'postgrespolicy',
    'postgrespolicycandidate',
    'postgrespolicyplan',
    'secret',
    'ephemeralaccessrequest',
  ],
  executor: ['postgrespolicy', 'postgrespolicyplan', 'ephemeralaccessrequest', 'ephemeralaccesspolicy'],
} as const;

/** One process that follows resource kinds (a cache follower of the floor stands in for it). */
export interface Follower {
  readonly name: string;
  readonly kinds: readonly string[];
}

/** The stage's cache followers: the planner, and each executor replica. */
export function cacheFollowers(executors: number): Follower[] {
  return [
    { name: 'planner', kinds: FOLLOWED_KINDS.planner },
    ...Array.from({ length: executors }, (_, i) => ({
      name: `executor-${i}`,
      kinds: FOLLOWED_KINDS.executor,
    })),
  ];
}

/** Deliveries by kind: each published resource event reaches every follower of its kind once. */
export function cacheDeliveries(
  published: Readonly<Record<string, number>>,
  followers: readonly Follower[],
): Record<string, number> {
  return Object.fromEntries(
    Object.entries(published).map(([kind, n]) => [
      kind,
      n * followers.filter((f) => f.kinds.includes(kind)).length,
    ]),
  );
}

/**
 * The kind of a resource event's subject (`<root>.resource.<kind>.<namespace>.<name>`), or undefined for
 * anything else, resync markers (`<kind>._resync.<chunk>`) and the admission report (`_admission`) included:
 * those are published per resync interval, not per policy, and belong to the idle baseline.
 */
export function resourceKindOf(subject: string, root = 'rp'): string | undefined {
  const parts = subject.split('.');
  if (parts.length !== 5 || parts[0] !== root || parts[1] !== 'resource') return undefined;
  if (parts[2]!.startsWith('_') || parts[3]!.startsWith('_')) return undefined;
  return parts[2];
}

/** Subjects carried by a JetStream stream (publish with a stream ack); anything else under root is core NATS. */
export function onStream(subject: string, root = 'rp'): boolean {
  return ['resource', 'k8s.cmd', 'execute', 'deadletter'].some((s) => subject.startsWith(`${root}.${s}.`));
}

/**
 * Per-kind counts scaled so they add up to `stored` (the stream's sequence delta) when the publishes seen
 * exceed it: a publish the stream dropped as a duplicate (`Nats-Msg-Id` within its window) reached no follower.
 */
export function scaleToStored(
  seen: Readonly<Record<string, number>>,
  stored: number,
): Record<string, number> {
  const total = Object.values(seen).reduce((a, b) => a + b, 0);
  if (total <= stored || total === 0) return { ...seen };
  return Object.fromEntries(Object.entries(seen).map(([k, n]) => [k, Math.round((n * stored) / total)]));
}

/** Policy `i`'s share of `total` events over `policies` policies: whole numbers that add up to `total`. */
export function share(total: number, policies: number, i: number): number {
  return Math.floor(((i + 1) * total) / policies) - Math.floor((i * total) / policies);
}

/** Why a counted API write is left out of the floor (undefined: the floor makes it). */
export function apiWriteLeftOut(key: string): string | undefined {
  if (key.startsWith('refused ')) return 'refused by the API: nothing was written';
  if (key === 'POST postgrespolicies') return "the user's create, not the control plane's";
  if (key.endsWith(' leases')) return 'leader lease renewal: by the clock, in the idle baseline';
  return undefined;
}

/** The stage's API writes the floor repeats, and those it leaves out with the reason. */
export function floorApiWrites(counted: ReadonlyMap<string, number>): {
  readonly writes: Map<string, number>;
  readonly leftOut: Record<string, string>;
} {
  const writes = new Map<string, number>();
  const leftOut: Record<string, string> = {};
  for (const [key, n] of counted) {
    const why = apiWriteLeftOut(key);
    if (why !== undefined) leftOut[key] = why;
    else if (n > 0) writes.set(key, n);
  }
  return { writes, leftOut };
}

/** One API write of the floor: `POST configmaps`, `PUT postgrespolicies/status`, ... */
export interface WriteOp {
  readonly verb: string;
  readonly resource: string;
  readonly sub: string | undefined;
}

/** Parses a write key of fleet-health.ts's ApiWriteCounter. */
export function writeOp(key: string): WriteOp {
  const [verb = '', path = ''] = key.split(' ');
  const [resource = '', sub] = path.split('/');
  return { verb, resource, sub };
}

/**
 * Policy `i`'s writes, creates first (a status write needs its object; a policy with a create of the kind
 * writes the status of what it created), then the rest in the order of the keys.
 */
export function writesOfPolicy(writes: ReadonlyMap<string, number>, policies: number, i: number): WriteOp[] {
  const ops = [...writes].flatMap(([key, total]) =>
    Array.from({ length: share(total, policies, i) }, () => writeOp(key)),
  );
  return [...ops.filter((o) => o.verb === 'POST'), ...ops.filter((o) => o.verb !== 'POST')];
}

/** The key of a resource event's payloads: `resource:<kind>`. */
export const resourceKey = (kind: string): string => `resource:${kind}`;
/** The key of the replies to a core request subject: `reply:<subject>`. */
export const replyKey = (subject: string): string => `reply:${subject}`;

/** The counts the floor repeats, stage totals, and what it leaves out (with why). */
export function floorCounts(shape: {
  readonly executors: number;
  readonly handled: ReadonlyMap<string, number>;
  readonly traffic: { readonly payloads: PayloadSamples; readonly resourcesStored: number };
  readonly apiWrites: ReadonlyMap<string, number>;
  readonly templates: Readonly<Record<string, unknown>>;
}) {
  const leftOut: Record<string, string> = {};
  const { payloads } = shape.traffic;
  const sampled = (key: string): boolean => {
    if (payloads.samples(key).length > 0) return true;
    leftOut[key] = 'no payload of it was seen in the stage';
    return false;
  };
  // JetStream: what the services' transport handled (every delivery a handler ran; a redelivery counts again,
  // and the bench reports retries apart: none in a quiet stage). Not the publishes seen: a publish the stream
  // dropped as a duplicate reached no consumer.
  const jetStream = [...shape.handled].filter(
    ([subject, n]) => n > 0 && onStream(subject) && sampled(subject),
  );
  // Core NATS (inspect requests, Secret reads, applied snapshots): what was published in the stage.
  const core = payloads
    .keys()
    .filter((k) => !k.includes(':') && !onStream(k) && sampled(k))
    .map((subject) => [subject, payloads.count(subject)] as const);
  // Resource events by kind, as the gateway published them (markers left out: per resync, not per policy),
  // scaled to what the stream stored: only a stored event is delivered to the caches.
  const seen = Object.fromEntries(
    payloads
      .keys()
      .filter((k) => k.startsWith('resource:'))
      .map((k) => [k.slice('resource:'.length), payloads.count(k)]),
  );
  const resources = scaleToStored(seen, shape.traffic.resourcesStored);
  const followers = cacheFollowers(shape.executors);
  const api = floorApiWrites(shape.apiWrites);
  Object.assign(leftOut, api.leftOut);
  // A write the floor has no body for, or no way to make, is left out and said so.
  for (const key of [...api.writes.keys()]) {
    const op = writeOp(key);
    const known = op.verb === 'POST' || (op.verb === 'PUT' && (op.sub === undefined || op.sub === 'status'));
    if (!known || shape.templates[op.resource] === undefined) {
      leftOut[key] = known ? 'no object of the resource to copy' : 'a verb the floor does not make';
      api.writes.delete(key);
    }
  }
  return {
    jetStream,
    core,
    resources,
    deliveries: cacheDeliveries(resources, followers),
    followers,
    api,
    leftOut,
  };
}

/** Milliseconds of CPU per second of each process over an idle window (from CPU seconds before and after). */
export function idleRates(
  before: Readonly<Record<string, number>>,
  after: Readonly<Record<string, number>>,
  seconds: number,
): Record<string, number> {
  return Object.fromEntries(
    Object.entries(after).map(([k, v]) => [k, round2(((v - (before[k] ?? 0)) * 1000) / seconds)]),
  );
}

/** What the services' idle rates (ms/s) add up to per policy over a stage of `seconds` wall time. */
export function idleCpuMsPerPolicy(
  rates: Readonly<Record<string, number>>,
  seconds: number,
  policies: number,
): number {
  const perSecond = Object.values(rates).reduce((a, b) => a + b, 0);
  return round2((perSecond * seconds) / policies);
}

/** a / b to two decimals; null when either is missing or b is not positive. */
export function ratio(a: number | undefined, b: number | undefined): number | null {
  return a === undefined || b === undefined || !(b > 0) ? null : round2(a / b);
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}

/**
 * Up to `size` payloads per key, a uniform sample of all seen (reservoir sampling, `random` injected), with
 * the count and bytes of all: the floor publishes copies of what the stage sent, in the stage's proportions.
 */
export class PayloadSamples {
  private readonly byKey = new Map<string, { count: number; bytes: number; samples: Uint8Array[] }>();

  constructor(
    private readonly size = 32,
    private readonly random: () => number = Math.random,
  ) {}

  add(key: string, data: Uint8Array): void {
    let entry = this.byKey.get(key);
    if (entry === undefined) this.byKey.set(key, (entry = { count: 0, bytes: 0, samples: [] }));
    entry.count += 1;
    entry.bytes += data.length;
    if (entry.samples.length < this.size) entry.samples.push(data.slice());
    else {
      const at = Math.floor(this.random() * entry.count);
      if (at < this.size) entry.samples[at] = data.slice();
    }
  }

  keys(): string[] {
    return [...this.byKey.keys()];
  }

  count(key: string): number {
    return this.byKey.get(key)?.count ?? 0;
  }

  /** Mean bytes of the key's payloads (0 when none was seen). */
  meanBytes(key: string): number {
    const entry = this.byKey.get(key);
    return entry === undefined || entry.count === 0 ? 0 : Math.round(entry.bytes / entry.count);
  }

  samples(key: string): readonly Uint8Array[] {
    return this.byKey.get(key)?.samples ?? [];
  }
}
