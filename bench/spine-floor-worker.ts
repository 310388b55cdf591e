// One process of the spine floor (spine-floor.ts), forked by it: it sets up (connects, binds, creates what its
// writes need), says `ready`, and on `go` does its share of the floor's transport work and reports the CPU it
// spent from `go` to the end (process.cpuUsage: every thread of the process, as /proc counts a service's).
// No product code runs here: JSON in and out, JetStream and core NATS through the clients the services use,
// API writes through @kubernetes/client-node's transport.
import { readFileSync } from 'node:fs';

import { DeliverPolicy, jetstream, type JetStreamClient } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { KubeConfig } from '@kubernetes/client-node';

import { share, writesOfPolicy, type WriteOp } from './spine-counts.js';
import { RawApi, collectionPath } from './raw-api.js';
import type { ApiObject } from './spine-capture.js';

/** Messages of one subject (or resource kind) to send: the stage's total and a sample of its payloads. */
export interface Traffic {
  readonly subject: string;
  readonly total: number;
  readonly samples: readonly Uint8Array[];
  /** Core NATS only: a request (waits for the reply) rather than a publish. */
  readonly request?: boolean;
  /** Core NATS only, for the receiver: the replies to answer with. */
  readonly replies?: readonly Uint8Array[];
}

/** What a worker does. */
export type WorkerTask =
  | {
      readonly role: 'sender';
      readonly url: string;
      readonly policies: number;
      readonly jetStream: readonly Traffic[];
      readonly core: readonly Traffic[];
    }
  | {
      readonly role: 'receiver';
      readonly url: string;
      readonly stream: string;
      readonly durable: string;
      readonly jetStreamTotal: number;
      readonly core: readonly Traffic[];
    }
  | {
      readonly role: 'resource-publisher';
      readonly url: string;
      readonly policies: number;
      readonly kinds: readonly Traffic[];
    }
  | {
      readonly role: 'follower';
      readonly url: string;
      readonly stream: string;
      readonly kinds: readonly string[];
      readonly total: number;
    }
  | {
      readonly role: 'writer';
      readonly kubeconfig: string;
      readonly namespace: string;
      readonly policies: number;
      readonly writes: readonly [string, number][];
      readonly templates: Record<string, ApiObject>;
    };

/** Requests or publishes in flight at once in a sender: the services' publishers run side by side. */
const IN_FLIGHT = 64;
/** Policies whose API writes run at once (the gateway applies commands side by side across objects). */
const WRITES_IN_FLIGHT = 16;

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const parse = (data: Uint8Array): unknown => JSON.parse(decoder.decode(data));

/** Runs `tasks` with `width` at a time. */
async function pool(tasks: readonly (() => Promise<unknown>)[], width: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, tasks.length) }, async () => {
      while (next < tasks.length) await tasks[next++]!();
    }),
  );
}

/**
 * Every message of `traffic`, interleaved policy by policy as a fleet sends them, each serialised from an
 * object (the design's one JSON.stringify per message) copied from the stage's payloads in turn.
 */
function messages(
  traffic: readonly Traffic[],
  policies: number,
  subjectOf: (t: Traffic, i: number) => string,
) {
  const parsed = traffic.map((t) => t.samples.map(parse));
  const out: { traffic: Traffic; subject: string; body: unknown }[] = [];
  for (let i = 0; i < policies; i++)
    for (const [k, t] of traffic.entries())
      for (let n = 0; n < share(t.total, policies, i); n++) {
        const samples = parsed[k]!;
        out.push({ traffic: t, subject: subjectOf(t, i), body: samples[(i + n) % samples.length] });
      }
  return out;
}

async function sender(
  task: Extract<WorkerTask, { role: 'sender' }>,
  nc: NatsConnection,
): Promise<() => Promise<void>> {
  const js = jetstream(nc);
  let id = 0;
  const onStream = messages(task.jetStream, task.policies, (t) => t.subject).map(
    (m) => () => js.publish(m.subject, encoder.encode(JSON.stringify(m.body)), { msgID: `floor-${id++}` }),
  );
  const core = messages(task.core, task.policies, (t) => t.subject).map((m) => async () => {
    const data = encoder.encode(JSON.stringify(m.body));
    if (m.traffic.request) parse((await nc.request(m.subject, data, { timeout: 60_000 })).data);
    else nc.publish(m.subject, data);
  });
  return () => pool([...onStream, ...core], IN_FLIGHT);
}

async function receiver(
  task: Extract<WorkerTask, { role: 'receiver' }>,
  nc: NatsConnection,
): Promise<() => Promise<void>> {
  const expected = task.jetStreamTotal + task.core.reduce((n, t) => n + t.total, 0);
  let received = 0;
  let finished!: () => void;
  const done = new Promise<void>((resolve) => (finished = resolve));
  const count = (): void => {
    if (++received === expected) finished();
  };
  for (const t of task.core) {
    const replies = (t.replies ?? []).map(parse);
    let n = 0;
    nc.subscribe(t.subject, {
      callback: (_err, msg) => {
        parse(msg.data);
        if (t.request)
          msg.respond(encoder.encode(JSON.stringify(replies[n++ % Math.max(1, replies.length)] ?? {})));
        count();
      },
    });
  }
  const consumer = await jetstream(nc).consumers.get(task.stream, task.durable);
  const stream = await consumer.consume({ max_messages: 256 });
  void (async () => {
    for await (const m of stream) {
      parse(m.data);
      m.ack();
      count();
    }
  })();
  await nc.flush();
  return async () => {
    if (expected > 0) await done;
    await nc.flush();
    await stream.close();
  };
}

async function resourcePublisher(
  task: Extract<WorkerTask, { role: 'resource-publisher' }>,
  js: JetStreamClient,
): Promise<() => Promise<void>> {
  let id = 0;
  // A subject per event (`rp.resource.<kind>.<namespace>.<name>` keeps one per object): with one per object, a
  // policy's events published back to back would replace each other before a follower had them, which the
  // stage's, seconds apart, mostly do not; every event is delivered, as the floor counts.
  const all = messages(
    task.kinds,
    task.policies,
    (t, i) => `floor.resource.${t.subject}.bench.p${i}-${id++}`,
  );
  id = 0;
  return () =>
    pool(
      all.map(
        (m) => () => js.publish(m.subject, encoder.encode(JSON.stringify(m.body)), { msgID: `res-${id++}` }),
      ),
      IN_FLIGHT,
    );
}

async function follower(
  task: Extract<WorkerTask, { role: 'follower' }>,
  nc: NatsConnection,
): Promise<() => Promise<void>> {
  // A ResourceCache's work per event: one ordered consumer per kind, each event parsed once and kept by subject.
  const objects = new Map<string, unknown>();
  let received = 0;
  let finished!: () => void;
  const done = new Promise<void>((resolve) => (finished = resolve));
  const streams: { close(): Promise<unknown> }[] = [];
  for (const kind of task.kinds) {
    const consumer = await jetstream(nc).consumers.get(task.stream, {
      filter_subjects: `floor.resource.${kind}.>`,
      deliver_policy: DeliverPolicy.LastPerSubject,
    });
    const messages = await consumer.consume({ max_messages: 256 });
    streams.push(messages);
    void (async () => {
      for await (const m of messages) {
        objects.set(m.subject, parse(m.data));
        if (++received === task.total) finished();
      }
    })();
  }
  return async () => {
    if (task.total > 0) await done;
    await Promise.all(streams.map((s) => s.close()));
  };
}

/** The writer's copy of an object: its path and latest resourceVersion after each write. */
type Written = { path: string; object: ApiObject };

function copyOf(template: ApiObject, name: string, namespace: string): ApiObject {
  const { status: _status, metadata, ...rest } = template;
  const keep = ['labels', 'annotations', 'ownerReferences'] as const;
  const kept = Object.fromEntries(keep.filter((k) => metadata[k] !== undefined).map((k) => [k, metadata[k]]));
  return { ...rest, metadata: { ...kept, name, namespace } };
}

async function writer(task: Extract<WorkerTask, { role: 'writer' }>): Promise<() => Promise<void>> {
  const kc = new KubeConfig();
  kc.loadFromString(readFileSync(task.kubeconfig, 'utf8'));
  const api = new RawApi(kc);
  const writes = new Map(task.writes);
  const plans = Array.from({ length: task.policies }, (_, i) => writesOfPolicy(writes, task.policies, i));
  const create = async (resource: string, name: string): Promise<Written> => {
    const path = collectionPath(resource, task.namespace);
    const object = await api.post<ApiObject>(path, copyOf(task.templates[resource]!, name, task.namespace));
    return { path: `${path}/${name}`, object };
  };
  // Set-up, not measured: the objects whose status a policy writes without creating them (its policy).
  const bases = await Promise.all(
    plans.map(async (ops, i) => {
      const own = new Map<string, Written>();
      const needed = new Set(ops.filter((o) => o.verb !== 'POST').map((o) => o.resource));
      for (const o of ops) if (o.verb === 'POST') needed.delete(o.resource);
      for (const resource of needed) own.set(resource, await create(resource, `floor-${i}-base`));
      return own;
    }),
  );
  const run = async (ops: readonly WriteOp[], i: number): Promise<void> => {
    const own = bases[i]!;
    for (const [n, op] of ops.entries()) {
      if (op.verb === 'POST') {
        own.set(op.resource, await create(op.resource, `floor-${i}-${n}`));
        continue;
      }
      const target = own.get(op.resource)!;
      // The stage's object's status each time: the client sends and reads the same bytes as the stage's writes
      // (what the API server then does with an unchanged status is its CPU, reported apart).
      const status = op.sub === 'status' ? { status: task.templates[op.resource]!['status'] } : {};
      const body = { ...target.object, ...status };
      target.object = await api.put<ApiObject>(`${target.path}${op.sub ? `/${op.sub}` : ''}`, body);
    }
  };
  return () =>
    pool(
      plans.map((ops, i) => () => run(ops, i)),
      WRITES_IN_FLIGHT,
    );
}

async function prepare(task: WorkerTask): Promise<{ work: () => Promise<void>; close: () => Promise<void> }> {
  if (task.role === 'writer') return { work: await writer(task), close: async () => undefined };
  const nc = await connect({ servers: task.url });
  const close = () => nc.close();
  switch (task.role) {
    case 'sender':
      return { work: await sender(task, nc), close };
    case 'receiver':
      return { work: await receiver(task, nc), close };
    case 'resource-publisher':
      return { work: await resourcePublisher(task, jetstream(nc)), close };
    case 'follower':
      return { work: await follower(task, nc), close };
  }
}

process.once('message', (task: WorkerTask) => {
  void (async () => {
    const { work, close } = await prepare(task);
    process.send!({ type: 'ready' });
    await new Promise((resolve) => process.once('message', resolve));
    const cpu = process.cpuUsage();
    const started = performance.now();
    await work();
    const used = process.cpuUsage(cpu);
    const seconds = (performance.now() - started) / 1000;
    process.send!({ type: 'done', cpuMs: (used.user + used.system) / 1000, seconds });
    await close();
    process.disconnect();
  })().catch((error: unknown) => {
    process.send!({ type: 'failed', message: (error as Error).stack ?? String(error) });
    process.exitCode = 1;
    process.disconnect();
  });
});
