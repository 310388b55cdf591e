// The floor of `npm run bench -- gateway`, run as its own Node process: the API requests the k8s-gateway
// makes for each command kind (a create without a read, a status write from the watched object), made
// directly with plain `fetch` (JSON.stringify out, JSON.parse in), and the watch-to-stream path (a raw watch, each line parsed, published to JetStream and acknowledged). Its own
// CPU per command and per event is what the same work costs without the gateway's machinery.
import { createInterface } from 'node:readline';
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { GROUP, KIND_NAMES, VERSION } from '@rolepolicy/kube';
import { COMMAND_KINDS, FleetCommands, type BenchPolicy, type CommandKind } from './gateway-commands.js';

type Json = Record<string, unknown>;

/** What the bench process hands the floor process. */
export type FloorInput = {
  readonly apiUrl: string;
  readonly natsUrl: string;
  readonly namespace: string;
  /** Policies the bench process creates once the watch is open (their list follows on the next line). */
  readonly count: number;
  /** The first `warm` of them warm the JIT and the connections up, unmeasured. */
  readonly warm: number;
  /** Resource subject root, `rp.resource`. */
  readonly resourceRoot: string;
};

/** CPU microseconds of the floor process per command of each kind, per watch event, and request counts. */
export type FloorResult = {
  readonly usPerCommand: Record<CommandKind, number>;
  readonly requestsPerCommand: Record<CommandKind, number>;
  readonly usPerWatchEvent: number;
  readonly watchEvents: number;
};

/** RFC 7386 merge patch, as a `patch-status` applies it. */
function mergePatchFloor(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const base = typeof target === 'object' && target !== null && !Array.isArray(target) ? target : {};
  const out: Json = { ...(base as Json) };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatchFloor(out[k], v);
  }
  return out;
}

const custom = (namespace: string, plural: string) =>
  `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/${plural}`;

async function call(base: string, method: string, path: string, body?: unknown): Promise<Json | undefined> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (res.status === 404) return undefined;
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 200)}`);
  return JSON.parse(text) as Json;
}

const cpuUs = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/** Runs `work` for each policy with its command, 8 at a time (the gateway's default concurrency). */
async function eachPolicy(
  policies: readonly BenchPolicy[],
  commands: readonly Json[],
  work: (p: BenchPolicy, c: Json) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < policies.length) {
        const i = next++;
        await work(policies[i]!, commands[i]!);
      }
    }),
  );
}

/** The requests of each command kind, as the gateway makes them. */
function floorSteps(input: FloorInput, fleet: FleetCommands, watched: ReadonlyMap<string, Json>) {
  const { apiUrl: base, namespace: ns } = input;
  const plans = custom(ns, KIND_NAMES.PostgresPolicyPlan.plural);
  const policies = custom(ns, KIND_NAMES.PostgresPolicy.plural);
  const written = new Map<string, Json>();
  const planUids = new Map<string, string>();
  const steps: Record<CommandKind, { requests: number; run: (p: BenchPolicy, c: Json) => Promise<void> }> = {
    'apply-plan': {
      requests: 2,
      run: async (p, command) => {
        const c = command as Json & { object: Json; status: Json; target: { name: string } };
        const created = (await call(base, 'POST', plans, c.object))!;
        const status = await call(base, 'PUT', `${plans}/${c.target.name}/status`, {
          ...created,
          status: c.status,
        });
        written.set(c.target.name, status!);
        planUids.set(p.uid, (created['metadata'] as Json)['uid'] as string);
      },
    },
    'apply-configmap': {
      requests: 1,
      run: async (_p, command) => {
        const c = command as Json & { object: Json; target: { name: string } };
        const path = `/api/v1/namespaces/${ns}/configmaps`;
        await call(base, 'POST', path, c.object);
      },
    },
    'patch-plan-status': {
      requests: 1,
      run: async (_p, command) => {
        const c = command as Json & { status: Json; target: { name: string } };
        const current = written.get(c.target.name)!;
        await call(base, 'PUT', `${plans}/${c.target.name}/status`, {
          ...current,
          status: mergePatchFloor(current['status'], c.status),
        });
      },
    },
    'patch-policy-status': {
      requests: 1,
      run: async (p, command) => {
        const c = command as Json & { status: Json };
        const current = watched.get(p.name)!;
        await call(base, 'PUT', `${policies}/${p.name}/status`, {
          ...current,
          status: mergePatchFloor(current['status'], c.status),
        });
      },
    },
    'record-event': {
      requests: 1,
      run: async (p, command) => {
        const c = command as Json & { event: Json; idempotencyKey: string };
        const event = c.event as {
          type: string;
          reason: string;
          message: string;
          action: string;
          component: string;
        };
        const now = new Date().toISOString();
        await call(base, 'POST', `/api/v1/namespaces/${ns}/events`, {
          metadata: {
            name: `${p.name}.${c.idempotencyKey.length.toString(16).padStart(16, '0')}`,
            namespace: ns,
          },
          involvedObject: {
            apiVersion: `${GROUP}/${VERSION}`,
            kind: 'PostgresPolicy',
            name: p.name,
            namespace: ns,
            uid: p.uid,
          },
          type: event.type,
          reason: event.reason,
          message: event.message,
          action: event.action,
          source: { component: event.component },
          reportingComponent: event.component,
          reportingInstance: 'floor',
          firstTimestamp: now,
          lastTimestamp: now,
          count: 1,
        });
      },
    },
  };
  const build = (kind: CommandKind, p: BenchPolicy, i: number): Json =>
    fleet.command(kind, p, i, planUids.get(p.uid)) as unknown as Json;
  return { steps, build };
}

/**
 * The watch-to-stream path: watches the namespace's policies from `resourceVersion`, publishes each event
 * until `count` arrived; CPU measured from the first line to the last acknowledgement.
 */
async function watchFloor(
  input: FloorInput,
  count: number,
  ready: () => void,
  seenObjects: Map<string, Json>,
): Promise<number> {
  const nc = await connect({ servers: input.natsUrl });
  const js = jetstream(nc);
  const path = `${custom(input.namespace, KIND_NAMES.PostgresPolicy.plural)}?watch=1&allowWatchBookmarks=false`;
  const res = await fetch(`${input.apiUrl}${path}`);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  ready();
  let buffered = '';
  let seen = 0;
  let start = 0;
  while (seen < count) {
    const { value, done } = await reader.read();
    if (done) throw new Error('the floor watch ended early');
    if (seen === input.warm) start = cpuUs();
    buffered += value;
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      if (line.trim() === '') continue;
      const event = JSON.parse(line) as { type: string; object: Json };
      if (event.type !== 'ADDED' && event.type !== 'MODIFIED') continue;
      const meta = event.object['metadata'] as Json;
      seenObjects.set(String(meta['name']), event.object);
      const payload = { v: 1, type: 'upsert', object: event.object, observedAt: new Date().toISOString() };
      await js.publish(
        `${input.resourceRoot}.postgrespolicy.${input.namespace}.${String(meta['name'])}`,
        JSON.stringify(payload),
        { msgID: `${String(meta['uid'])}:${String(meta['resourceVersion'])}:upsert` },
      );
      seen++;
    }
  }
  const used = cpuUs() - start;
  await reader.cancel();
  await nc.close();
  return used / (count - input.warm);
}

/**
 * The floor process: reads its input from stdin, says `ready` once its watch is open, waits for `go`
 * (the bench process then creates the policies it watches), and prints its result as the last line.
 */
export async function runGatewayFloor(): Promise<void> {
  const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  const input = JSON.parse((await lines.next()).value as string) as FloorInput;
  const fleet = new FleetCommands();
  // Let the start-up's background compilation and GC finish: they are not the watch path's.
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const watched = new Map<string, Json>();
  const usPerWatchEvent = await watchFloor(input, input.count, () => console.log('ready'), watched);
  const all = JSON.parse((await lines.next()).value as string) as BenchPolicy[];
  const { steps, build } = floorSteps(input, fleet, watched);
  const warm = all.slice(0, input.warm);
  for (const kind of COMMAND_KINDS) {
    const commands = warm.map((p, i) => build(kind, p, i));
    await eachPolicy(warm, commands, steps[kind].run);
  }
  const policies = all.slice(input.warm);
  const usPerCommand = {} as Record<CommandKind, number>;
  const requestsPerCommand = {} as Record<CommandKind, number>;
  for (const kind of COMMAND_KINDS) {
    // Built before the clock starts: the floor measures the requests, not the making of the bodies.
    const commands = policies.map((p, i) => build(kind, p, i));
    const start = cpuUs();
    await eachPolicy(policies, commands, steps[kind].run);
    usPerCommand[kind] = Math.round((cpuUs() - start) / policies.length);
    requestsPerCommand[kind] = steps[kind].requests;
  }
  const result: FloorResult = {
    usPerCommand,
    requestsPerCommand,
    usPerWatchEvent: Math.round(usPerWatchEvent),
    watchEvents: input.count - input.warm,
  };
  console.log(JSON.stringify(result));
  process.exit(0);
}
