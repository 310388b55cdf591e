// The spine floor's counts and the idle baseline's arithmetic (spine-counts.ts).
import {
  PayloadSamples,
  cacheDeliveries,
  cacheFollowers,
  floorApiWrites,
  floorCounts,
  idleCpuMsPerPolicy,
  idleRates,
  ratio,
  resourceKey,
  resourceKindOf,
  scaleToStored,
  share,
  writesOfPolicy,
} from './spine-counts.js';

const bytes = (n: number): Uint8Array => new Uint8Array(n);

describe('spine floor counts', () => {
  it('delivers each resource event once to every process that follows its kind', () => {
    const followers = cacheFollowers(2);
    expect(followers.map((f) => f.name)).toEqual(['planner', 'executor-0', 'executor-1']);
    // Policies and plans: the planner and both executors; Secrets: the planner only; ConfigMaps: nobody here.
    expect(
      cacheDeliveries({ postgrespolicy: 2, postgrespolicyplan: 5, secret: 1, configmap: 1 }, followers),
    ).toEqual({
      postgrespolicy: 6,
      postgrespolicyplan: 15,
      secret: 1,
      configmap: 0,
    });
  });

  it('reads the kind of a resource event and leaves resync markers and the admission report out', () => {
    expect(resourceKindOf('rp.resource.postgrespolicyplan.bench.fleet-1-abc')).toBe('postgrespolicyplan');
    expect(resourceKindOf('rp.resource.secret._resync.0')).toBeUndefined();
    expect(resourceKindOf('rp.resource._admission.decisions')).toBeUndefined();
    expect(resourceKindOf('rp.k8s.cmd.planner.patch-status')).toBeUndefined();
  });

  it('scales the publishes seen down to what the stream stored, never up', () => {
    expect(scaleToStored({ a: 60, b: 40 }, 50)).toEqual({ a: 30, b: 20 });
    expect(scaleToStored({ a: 60, b: 40 }, 120)).toEqual({ a: 60, b: 40 });
  });

  it('shares a total over policies in whole numbers that add up to it', () => {
    const shares = Array.from({ length: 500 }, (_, i) => share(1460, 500, i));
    expect(shares.reduce((a, b) => a + b, 0)).toBe(1460);
    expect(new Set(shares)).toEqual(new Set([2, 3]));
  });

  it("leaves the user's creates, lease renewals and refused writes out of the floor's API writes", () => {
    const counted = new Map([
      ['POST postgrespolicies', 500],
      ['PUT leases', 60],
      ['refused PUT postgrespolicies/status', 4],
      ['PUT postgrespolicies/status', 1460],
      ['POST postgrespolicyplans', 500],
    ]);
    const { writes, leftOut } = floorApiWrites(counted);
    expect([...writes]).toEqual([
      ['PUT postgrespolicies/status', 1460],
      ['POST postgrespolicyplans', 500],
    ]);
    expect(Object.keys(leftOut).sort()).toEqual([
      'POST postgrespolicies',
      'PUT leases',
      'refused PUT postgrespolicies/status',
    ]);
  });

  it("orders a policy's writes creates first, so a status write finds its object", () => {
    const writes = new Map([
      ['PUT postgrespolicyplans/status', 3],
      ['POST postgrespolicyplans', 1],
    ]);
    expect(
      writesOfPolicy(writes, 1, 0).map((o) => `${o.verb} ${o.resource}${o.sub ? `/${o.sub}` : ''}`),
    ).toEqual([
      'POST postgrespolicyplans',
      'PUT postgrespolicyplans/status',
      'PUT postgrespolicyplans/status',
      'PUT postgrespolicyplans/status',
    ]);
  });

  it('takes JetStream counts from what was handled, core counts and resource kinds from what was published', () => {
    const payloads = new PayloadSamples(4, () => 0);
    for (let i = 0; i < 10; i++) payloads.add('rp.k8s.cmd.planner.patch-status', bytes(100));
    for (let i = 0; i < 3; i++) payloads.add('rp.inspect.request', bytes(50));
    for (let i = 0; i < 8; i++) payloads.add(resourceKey('postgrespolicyplan'), bytes(2000));
    payloads.add(resourceKey('secret'), bytes(300));
    const counts = floorCounts({
      executors: 1,
      // 12 handled against 10 publishes seen: a redelivery counts; a subject never seen has no payload to copy.
      handled: new Map([
        ['rp.k8s.cmd.planner.patch-status', 12],
        ['rp.execute.result', 2],
      ]),
      traffic: { payloads, resourcesStored: 9 },
      apiWrites: new Map([
        ['POST events', 3],
        ['DELETE postgrespolicyplans', 1],
        ['POST configmaps', 1],
      ]),
      templates: { events: {} },
    });
    expect(counts.jetStream).toEqual([['rp.k8s.cmd.planner.patch-status', 12]]);
    expect(counts.core).toEqual([['rp.inspect.request', 3]]);
    expect(counts.resources).toEqual({ postgrespolicyplan: 8, secret: 1 });
    expect(counts.deliveries).toEqual({ postgrespolicyplan: 16, secret: 1 });
    expect([...counts.api.writes]).toEqual([['POST events', 3]]);
    expect(counts.leftOut).toEqual({
      'rp.execute.result': 'no payload of it was seen in the stage',
      'DELETE postgrespolicyplans': 'a verb the floor does not make',
      'POST configmaps': 'no object of the resource to copy',
    });
  });

  it('keeps a bounded uniform sample with the count and mean size of all', () => {
    const draws = [0.9, 0.1];
    const samples = new PayloadSamples(2, () => draws.shift() ?? 0.99);
    samples.add('k', bytes(10));
    samples.add('k', bytes(20));
    samples.add('k', bytes(30)); // 0.9 * 3 = 2: kept out
    samples.add('k', bytes(40)); // 0.1 * 4 = 0: replaces the first
    expect(samples.count('k')).toBe(4);
    expect(samples.meanBytes('k')).toBe(25);
    expect(samples.samples('k').map((s) => s.length)).toEqual([40, 20]);
  });
});

describe('idle baseline', () => {
  it('turns CPU seconds over a window into ms per second, and the rates into ms per policy of a stage', () => {
    const rates = idleRates({ planner: 10, 'executor-0': 5 }, { planner: 10.3, 'executor-0': 5.06 }, 20);
    expect(rates).toEqual({ planner: 15, 'executor-0': 3 });
    // 18 ms/s over a 140 s stage of 500 policies.
    expect(idleCpuMsPerPolicy(rates, 140, 500)).toBe(5.04);
  });

  it('gives no ratio without a positive floor', () => {
    expect(ratio(128.8, 16.1)).toBe(8);
    expect(ratio(128.8, 0)).toBeNull();
    expect(ratio(undefined, 3)).toBeNull();
  });
});
