// The notifier over a cache stand-in: which sinks get an occurrence (namespace, cluster, both, types), the age
// limit, the revoked occurrence from a deleted holder, and an invalid ConfigMap reported once per version.
import type { ResourceChange } from '@rolepolicy/contracts';
import type { RequestLike } from '@rolepolicy/policy';
import type { DeliveryJob } from '../scheduler/queues.js';
import { Notifier } from './notifier.js';

type Obj = { metadata: { name: string; namespace: string; resourceVersion?: string } } & Record<
  string,
  unknown
>;
const NOW = Date.parse('2026-11-27T12:00:00Z');

function cache(objects: Record<string, Obj[]>) {
  let listener: ((c: ResourceChange) => void) | undefined;
  return {
    get: (kind: string, ns: string, name: string) =>
      (objects[kind] ?? []).find((o) => o.metadata.namespace === ns && o.metadata.name === name),
    list: (kind: string, ns?: string) =>
      (objects[kind] ?? []).filter((o) => ns === undefined || o.metadata.namespace === ns),
    onChange: (l: (c: ResourceChange) => void) => {
      listener = l;
      return () => undefined;
    },
    emit: (c: ResourceChange) => listener?.(c),
  };
}

const sink = (namespace: string, settings: Record<string, string>): Obj => ({
  metadata: { name: 'rolepolicy-notifications', namespace, resourceVersion: '1' },
  settings,
});
const valid = { urlSecretName: 'hook', signingSecretName: 'hook' };

function request(name: string, status: RequestLike['status'], namespace = 'team-a'): Obj {
  return {
    metadata: { name, namespace, uid: `uid-${name}` },
    spec: {
      accessPolicyRef: { name: 'p' },
      subject: { role: 'alice' },
      requestedBy: { username: 'alice@example.com' },
    },
    status,
  } as unknown as Obj;
}

function notifier(objects: Record<string, Obj[]>) {
  const jobs: DeliveryJob[] = [];
  const warnings: string[] = [];
  const events: string[] = [];
  const c = cache(objects);
  const n = new Notifier({
    cache: c as never,
    enqueue: async (job) => {
      jobs.push(job);
      return true;
    },
    clusterNamespace: 'rp-ops',
    maxAgeMs: 3_600_000,
    now: () => NOW,
    log: { warn: (m) => warnings.push(m) },
    reportInvalid: async (cm, message) => {
      events.push(`${cm.metadata.namespace}: ${message}`);
    },
  });
  n.start();
  return { jobs, warnings, events, emit: c.emit };
}

describe('the notifier', () => {
  it('queues an occurrence for the namespace sink and the cluster sink that wants its type', () => {
    const { jobs } = notifier({
      configmap: [sink('team-a', valid), sink('rp-ops', { ...valid, types: 'access.active' })],
      ephemeralaccessrequest: [request('r1', { phase: 'Active', activatedAt: '2026-11-27T11:59:00Z' })],
    });
    expect(jobs.map((j) => [j.occurrence.type, j.sinkNamespace])).toEqual([
      ['access.active', 'team-a'],
      ['access.active', 'rp-ops'],
    ]);
  });

  it('skips occurrences older than the age limit, and namespaces without a sink', () => {
    const { jobs } = notifier({
      configmap: [sink('team-a', valid)],
      ephemeralaccessrequest: [
        request('old', { phase: 'Active', activatedAt: '2026-11-27T10:00:00Z' }),
        request('elsewhere', { phase: 'Active', activatedAt: '2026-11-27T11:59:00Z' }, 'team-b'),
      ],
    });
    expect(jobs).toEqual([]);
  });

  it('tells a revocation when a request that held access is deleted', () => {
    const { jobs, emit } = notifier({
      configmap: [sink('team-a', valid)],
      ephemeralaccessrequest: [request('r2', { phase: 'Active', activatedAt: '2026-11-27T11:59:00Z' })],
    });
    emit({ type: 'delete', kind: 'ephemeralaccessrequest', namespace: 'team-a', name: 'r2' });
    expect(jobs.map((j) => j.occurrence.type)).toEqual(['access.active', 'access.revoked']);
  });

  it('a decision without a recorded time: sent when seen happening, not when an old object is seen again', () => {
    const decided = {
      phase: 'Denied',
      decidedBy: { username: 'bob@example.com' },
      conditions: [{ type: 'Denied', status: 'True' }],
    };
    const pending = {
      phase: 'PendingApproval',
      approvalExpiresAt: '2026-11-27T13:00:00Z',
      conditions: [{ type: 'Resolved', status: 'True', lastTransitionTime: '2026-11-27T11:58:00Z' }],
    };
    const live = request('live', pending);
    const { jobs, emit } = notifier({ configmap: [sink('team-a', valid)], ephemeralaccessrequest: [live] });
    emit({
      type: 'upsert',
      kind: 'ephemeralaccessrequest',
      namespace: 'team-a',
      name: 'live',
      object: request('live', decided) as never,
    });
    expect(jobs.map((j) => j.occurrence.type)).toEqual([
      'access.pending-approval',
      'access.decision-recorded',
    ]);

    // First sight of a request decided long ago (its latest recorded time is old): nothing to tell.
    const old = notifier({
      configmap: [sink('team-a', valid)],
      ephemeralaccessrequest: [
        request('old', {
          ...decided,
          conditions: [
            { type: 'Denied', status: 'True' },
            { type: 'Ready', status: 'False', lastTransitionTime: '2026-11-20T00:00:00Z' },
          ],
        }),
      ],
    });
    expect(old.jobs).toEqual([]);
  });

  it('reports an invalid ConfigMap once per version, naming the field and rule, and sends nothing to it', () => {
    const bad = sink('team-a', { format: 'teams', urlSecretName: 'hook' });
    const { jobs, warnings, events, emit } = notifier({
      configmap: [bad],
      ephemeralaccessrequest: [request('r3', { phase: 'Active', activatedAt: '2026-11-27T11:59:00Z' })],
    });
    emit({
      type: 'upsert',
      kind: 'configmap',
      namespace: 'team-a',
      name: 'rolepolicy-notifications',
      object: bad as never,
    });
    expect(jobs).toEqual([]);
    expect(warnings).toEqual([
      'ConfigMap team-a/rolepolicy-notifications is invalid, no notification goes to its sink: data.format: must be one of cloudevents, slack',
    ]);
    expect(events).toEqual([
      'team-a: no notification goes to this sink: data.format: must be one of cloudevents, slack',
    ]);
  });
});
