// The executor's production wiring on real NATS and PostgreSQL: Secrets, policies and plans arrive as the
// k8s-gateway's resource events; the fresh plan and policy decide under the lock; plan status goes back
// as gateway commands. Nothing secret reaches a log line, a result or a status patch.
import type { INestApplication } from '@nestjs/common';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import pg from 'pg';
import type { ExecuteRequestV2, ExecuteResultV1, K8sCommandV1 } from '@rolepolicy/contracts';
import type { PolicyContent } from '@rolepolicy/policy';
import {
  createNatsSandbox,
  createPostgresSandbox,
  eventually,
  sandboxId,
  type NatsSandbox,
  type PostgresSandbox,
} from '@rolepolicy/testing';
import {
  clusterNames,
  commandsSent,
  ensureClusterStreams,
  planObject,
  policyObject,
  publishObject,
  secretObject,
  startClusterExecutor,
  type ClusterNames,
} from './test-support/cluster.js';
import {
  NAMESPACE,
  approvedRequest,
  collectResults,
  executorTopology,
  publishRequest,
  type ExecutorTopology,
  type SecretStore,
} from './test-support/harness.js';

const run = sandboxId();

async function query<T extends pg.QueryResultRow>(
  url: string,
  text: string,
  values: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

async function roleExists(url: string, role: string): Promise<boolean> {
  return (await query(url, 'SELECT 1 FROM pg_roles WHERE rolname = $1', [role])).length === 1;
}

/** The sandbox URL with a password the server (trust auth) ignores, so a leak would be visible. */
function withUrlPassword(url: string, password: string): string {
  const parsed = new URL(url);
  parsed.password = password;
  return parsed.toString();
}

describe('executor cluster wiring: fresh plan, policy and Secrets from resource events', () => {
  let sandbox: NatsSandbox;
  let nc: NatsConnection;
  let topology: ExecutorTopology;
  let cluster: ClusterNames;
  let results: ExecuteResultV1[];
  let stopResults: () => void = () => undefined;
  const store: SecretStore = { connections: new Map(), passwords: new Map() };
  const databases: PostgresSandbox[] = [];
  const roles: string[] = [];
  const apps: INestApplication[] = [];
  const written: string[] = [];
  let restoreOutput: () => void = () => undefined;

  function role(label: string): string {
    const name = `rpc_${run}_${label}`;
    roles.push(name);
    return name;
  }

  async function database(label: string): Promise<PostgresSandbox> {
    const db = await createPostgresSandbox(label);
    databases.push(db);
    return db;
  }

  const resultsOf = (plan: string) => results.filter((r) => r.plan.name === plan);
  const finalResult = (plan: string): Promise<ExecuteResultV1> =>
    eventually(`final result of ${plan}`, () => resultsOf(plan).find((r) => r.phase !== 'Applying'), 60_000);
  const patchesOf = async (plan: string): Promise<Extract<K8sCommandV1, { command: 'patch-status' }>[]> =>
    (await commandsSent(nc, cluster)).filter(
      (c): c is Extract<K8sCommandV1, { command: 'patch-status' }> =>
        c.command === 'patch-status' && c.target.name === plan,
    );

  /**
   * The cluster as the planner left it when it sent the request: a connection Secret named like the
   * request's target, the policy, and its plan carrying the approved digest with `decision`.
   */
  async function publishCluster(
    planName: string,
    request: ExecuteRequestV2,
    url: string,
    content: PolicyContent,
    decision: 'Approved' | 'Denied' = 'Approved',
  ): Promise<void> {
    await publishObject(
      nc,
      cluster,
      'secret',
      secretObject(NAMESPACE, `${planName}-conn`, { DATABASE_URL: url }),
    );
    await publishObject(
      nc,
      cluster,
      'postgrespolicy',
      policyObject(NAMESPACE, request.policy.name, request.policy.uid ?? '', `${planName}-conn`, content),
    );
    await publishObject(
      nc,
      cluster,
      'postgrespolicyplan',
      planObject(
        NAMESPACE,
        planName,
        request.policy.name,
        {
          digest: request.changeDigest,
          encoding: request.changeDigestEncoding,
          physical: request.approvedIdentity.physical,
          logical: request.approvedIdentity.logical,
        },
        decision,
      ),
    );
  }

  /** approvedRequest with a policy of its own (one policy per plan, so tests do not share objects). */
  async function request(planName: string, url: string, content: PolicyContent, sources = {}) {
    const { request: built } = await approvedRequest({
      secrets: store,
      url,
      planName,
      content,
      passwordSources: sources,
    });
    const policyName = `policy-${planName}`;
    return { ...built, policy: { ...built.policy, name: policyName } };
  }

  beforeAll(async () => {
    // Everything the in-process replica prints, to prove no secret reaches a log line.
    const originals = [process.stdout, process.stderr].map((stream) => {
      const write = stream.write.bind(stream);
      stream.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
        written.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
        return write(chunk, ...rest);
      }) as typeof stream.write;
      return { stream, write };
    });
    restoreOutput = () => {
      for (const { stream, write } of originals) stream.write = write;
    };
    sandbox = await createNatsSandbox();
    nc = await connect({ servers: sandbox.url });
    topology = executorTopology(sandbox);
    cluster = clusterNames(sandbox, topology);
    await ensureClusterStreams(nc, cluster);
    ({ results, stop: stopResults } = await collectResults(nc, topology));
    apps.push(await startClusterExecutor(topology, cluster, sandbox.url, 1_000));
  }, 60_000);

  afterAll(async () => {
    restoreOutput();
    await Promise.all(apps.map((app) => app.close().catch(() => undefined)));
    stopResults();
    await nc?.close();
    await sandbox?.cleanup();
    await Promise.all(databases.map((db) => db.drop().catch(() => undefined)));
    for (const name of roles) {
      await query('postgres://postgres@127.0.0.1:5432/postgres', `DROP ROLE IF EXISTS "${name}"`).catch(
        () => undefined,
      );
    }
  }, 120_000);

  it('an approved plan executes with its Secret password; the plan gets Applying then Applied; no secret leaks', async () => {
    const db = await database('cl_ok');
    const name = role('ok');
    const cleartext = `Pw-${run}-never-logged`;
    const urlPassword = `UrlPw-${run}-never-logged`;
    const url = withUrlPassword(db.url, urlPassword);
    const passwordSecret = secretObject(NAMESPACE, 'cl-ok-login', { password: cleartext }, '41');
    const version = 'cl-ok-login:password:41';
    const content: PolicyContent = {
      roles: [{ name, login: true, password: { secretRef: { name: 'cl-ok-login' }, secretKey: 'password' } }],
    };
    const req = await request('plan-cl-ok', url, content, { [name]: version });
    await publishObject(nc, cluster, 'secret', passwordSecret);
    await publishCluster('plan-cl-ok', req, url, content);
    await publishRequest(nc, topology, req);

    const result = await finalResult('plan-cl-ok');
    expect(result).toMatchObject({
      phase: 'Applied',
      reason: 'Executed',
      executedDigest: req.changeDigest,
      appliedPasswordSourceVersions: { [name]: version },
    });
    expect(await roleExists(db.url, name)).toBe(true);
    const patches = await eventually('Applying and Applied patches', async () => {
      const found = await patchesOf('plan-cl-ok');
      return found.length >= 2 ? found : undefined;
    });
    expect(patches.map((p) => p.status['phase'])).toEqual(['Applying', 'Applied']);
    expect(patches[0]?.status['applyingSince']).toEqual(expect.any(String));
    expect(patches[1]?.status['appliedAt']).toEqual(expect.any(String));
    expect(patches.map((p) => p.idempotencyKey)).toEqual([
      `${req.idempotencyKey}/status/Applying`,
      `${req.idempotencyKey}/status/Applied`,
    ]);

    const [row] = await query<{ rolpassword: string }>(
      db.url,
      'SELECT rolpassword FROM pg_authid WHERE rolname = $1',
      [name],
    );
    expect(row?.rolpassword).toMatch(/^SCRAM-SHA-256\$4096:/);
    const everything = JSON.stringify(resultsOf('plan-cl-ok')) + JSON.stringify(patches) + written.join('');
    expect(written.join('')).toContain('plan-cl-ok: Applied');
    for (const secret of [cleartext, urlPassword, url, row?.rolpassword ?? 'missing']) {
      expect(everything).not.toContain(secret);
    }
  });

  it('a plan denied after the request is not executed (Skipped / NotApproved) and its status is left alone', async () => {
    const db = await database('cl_denied');
    const name = role('denied');
    const content: PolicyContent = { roles: [{ name, login: false }] };
    const req = await request('plan-cl-denied', db.url, content);
    await publishCluster('plan-cl-denied', req, db.url, content, 'Denied');
    await publishRequest(nc, topology, req);

    expect(await finalResult('plan-cl-denied')).toMatchObject({
      phase: 'Skipped',
      reason: 'NotApproved',
      executedDigest: null,
    });
    expect(await roleExists(db.url, name)).toBe(false);
    expect(await patchesOf('plan-cl-denied')).toEqual([]);
  });

  it('a policy edited after the request with different content is refused as a digest mismatch, nothing executed', async () => {
    const db = await database('cl_edited');
    const name = role('edited');
    const other = role('edited_other');
    const content: PolicyContent = { roles: [{ name, login: false }] };
    const req = await request('plan-cl-edited', db.url, content);
    await publishCluster('plan-cl-edited', req, db.url, content);
    // The edit lands after the planner sent the request.
    await publishObject(
      nc,
      cluster,
      'postgrespolicy',
      policyObject(NAMESPACE, req.policy.name, req.policy.uid ?? '', 'plan-cl-edited-conn', {
        roles: [{ name: other, login: false }],
      }),
    );
    await publishRequest(nc, topology, req);

    expect(await finalResult('plan-cl-edited')).toMatchObject({ phase: 'Superseded', executedDigest: null });
    expect(await roleExists(db.url, name)).toBe(false);
    expect(await roleExists(db.url, other)).toBe(false);
  });

  it('a policy whose connection now names another Secret is refused (TargetReferenceChanged), nothing executed', async () => {
    const db = await database('cl_target');
    const name = role('target');
    const content: PolicyContent = { roles: [{ name, login: false }] };
    const req = await request('plan-cl-target', db.url, content);
    await publishCluster('plan-cl-target', req, db.url, content);
    await publishObject(
      nc,
      cluster,
      'secret',
      secretObject(NAMESPACE, 'cl-target-elsewhere', { DATABASE_URL: db.url }),
    );
    await publishObject(
      nc,
      cluster,
      'postgrespolicy',
      policyObject(NAMESPACE, req.policy.name, req.policy.uid ?? '', 'cl-target-elsewhere', content),
    );
    await publishRequest(nc, topology, req);

    expect(await finalResult('plan-cl-target')).toMatchObject({
      phase: 'Superseded',
      reason: 'TargetReferenceChanged',
      executedDigest: null,
    });
    expect(await roleExists(db.url, name)).toBe(false);
  });

  it('a missing connection Secret fails closed with a reason naming the Secret, and the plan is marked Failed', async () => {
    const db = await database('cl_nosecret');
    const name = role('nosecret');
    const content: PolicyContent = { roles: [{ name, login: false }] };
    const req = await request('plan-cl-nosecret', db.url, content);
    await publishCluster('plan-cl-nosecret', req, db.url, content);
    await publishObject(
      nc,
      cluster,
      'secret',
      secretObject(NAMESPACE, 'plan-cl-nosecret-conn', {}),
      'delete',
    );
    await publishRequest(nc, topology, req);

    const result = await finalResult('plan-cl-nosecret');
    expect(result).toMatchObject({ phase: 'Failed', reason: 'SecretUnavailable', errorClass: 'permanent' });
    expect(result.message).toContain(`Secret ${NAMESPACE}/plan-cl-nosecret-conn not found`);
    expect(result.message).not.toContain(db.url);
    expect(await roleExists(db.url, name)).toBe(false);
    const patches = await eventually('a Failed patch', async () => {
      const found = await patchesOf('plan-cl-nosecret');
      return found.length > 0 ? found : undefined;
    });
    expect(patches.map((p) => p.status['phase'])).toEqual(['Failed']);
    expect(patches[0]?.status['lastError']).toContain('plan-cl-nosecret-conn');
  });
  it('a policy edit with identical effects keeps the approval: the re-plan from the fresh content matches and executes', async () => {
    const db = await database('cl_same');
    const [first, second] = [role('same_a'), role('same_b')];
    const content: PolicyContent = {
      roles: [
        { name: first, login: false },
        { name: second, login: false },
      ],
    };
    const req = await request('plan-cl-same', db.url, content);
    await publishCluster('plan-cl-same', req, db.url, content);
    // Reordered roles: a different content digest, the same effects.
    const reordered: PolicyContent = {
      roles: [
        { name: second, login: false },
        { name: first, login: false },
      ],
    };
    await publishObject(
      nc,
      cluster,
      'postgrespolicy',
      policyObject(NAMESPACE, req.policy.name, req.policy.uid ?? '', 'plan-cl-same-conn', reordered),
    );
    await publishRequest(nc, topology, req);

    expect(await finalResult('plan-cl-same')).toMatchObject({ phase: 'Applied', reason: 'Executed' });
    expect(await roleExists(db.url, first)).toBe(true);
    expect(await roleExists(db.url, second)).toBe(true);
  });

  it('a policy suspended after the request is not executed (Skipped / Suspended)', async () => {
    const db = await database('cl_suspend');
    const name = role('suspend');
    const content: PolicyContent = { roles: [{ name, login: false }] };
    const req = await request('plan-cl-suspend', db.url, content);
    await publishCluster('plan-cl-suspend', req, db.url, content);
    await publishObject(
      nc,
      cluster,
      'postgrespolicy',
      policyObject(NAMESPACE, req.policy.name, req.policy.uid ?? '', 'plan-cl-suspend-conn', content, {
        suspend: true,
      }),
    );
    await publishRequest(nc, topology, req);

    expect(await finalResult('plan-cl-suspend')).toMatchObject({ phase: 'Skipped', reason: 'Suspended' });
    expect(await roleExists(db.url, name)).toBe(false);
  });

  it('a password Secret rotated after planning supersedes the request; the old version is never applied', async () => {
    const db = await database('cl_rotated');
    const name = role('rotated');
    const version = 'cl-rotated-login:password:7';
    const content: PolicyContent = {
      roles: [
        { name, login: true, password: { secretRef: { name: 'cl-rotated-login' }, secretKey: 'password' } },
      ],
    };
    const req = await request('plan-cl-rotated', db.url, content, { [name]: version });
    await publishCluster('plan-cl-rotated', req, db.url, content);
    const rotated = `Rotated-${run}-secret`;
    await publishObject(
      nc,
      cluster,
      'secret',
      secretObject(NAMESPACE, 'cl-rotated-login', { password: rotated }, '8'),
    );
    await publishRequest(nc, topology, req);

    const result = await finalResult('plan-cl-rotated');
    expect(result).toMatchObject({
      phase: 'Superseded',
      reason: 'PasswordSourceChanged',
      executedDigest: null,
    });
    expect(result.message).toContain('resourceVersion 8, planned 7');
    expect(JSON.stringify(result)).not.toContain(rotated);
    expect(await roleExists(db.url, name)).toBe(false);
  });

  it('a plan left Applying by a crashed attempt whose SQL committed is completed: AlreadyConverged and an Applied patch', async () => {
    const db = await database('cl_leftover');
    const name = role('leftover');
    const content: PolicyContent = { roles: [{ name, login: false }] };
    const req = await request('plan-cl-leftover', db.url, content);
    await publishCluster('plan-cl-leftover', req, db.url, content);
    const approved = planObject(
      NAMESPACE,
      'plan-cl-leftover',
      req.policy.name,
      {
        digest: req.changeDigest,
        encoding: req.changeDigestEncoding,
        physical: req.approvedIdentity.physical,
        logical: req.approvedIdentity.logical,
      },
      'Approved',
    );
    await publishObject(nc, cluster, 'postgrespolicyplan', {
      ...approved,
      status: { ...approved.status, phase: 'Applying', applyingSince: new Date().toISOString() },
    });
    // The earlier attempt committed, then died before reporting.
    await query(db.url, `CREATE ROLE "${name}" NOLOGIN`);
    await publishRequest(nc, topology, req);

    expect(await finalResult('plan-cl-leftover')).toMatchObject({
      phase: 'Applied',
      reason: 'AlreadyConverged',
    });
    const patches = await eventually('an Applied patch', async () => {
      const found = await patchesOf('plan-cl-leftover');
      return found.length > 0 ? found : undefined;
    });
    expect(patches.map((p) => p.status['phase'])).toEqual(['Applied']);
  });
  it('a request that arrives before the gateway published its plan waits for it, then executes', async () => {
    const db = await database('cl_early');
    const name = role('early');
    const content: PolicyContent = { roles: [{ name, login: false }] };
    const req = await request('plan-cl-early', db.url, content);
    await publishObject(
      nc,
      cluster,
      'secret',
      secretObject(NAMESPACE, 'plan-cl-early-conn', { DATABASE_URL: db.url }),
    );
    await publishObject(
      nc,
      cluster,
      'postgrespolicy',
      policyObject(NAMESPACE, req.policy.name, req.policy.uid ?? '', 'plan-cl-early-conn', content),
    );
    await publishRequest(nc, topology, req);
    // The plan (and its approval) land later than the request, beyond one visibility wait.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await publishCluster('plan-cl-early', req, db.url, content);

    expect(await finalResult('plan-cl-early')).toMatchObject({ phase: 'Applied', reason: 'Executed' });
    expect(await roleExists(db.url, name)).toBe(true);
  });

  it('a plan that never becomes visible is retried, then reported Skipped / PlanGone on the last delivery', async () => {
    const db = await database('cl_never');
    const name = role('never');
    const content: PolicyContent = { roles: [{ name, login: false }] };
    const req = await request('plan-cl-never', db.url, content);
    await publishObject(
      nc,
      cluster,
      'secret',
      secretObject(NAMESPACE, 'plan-cl-never-conn', { DATABASE_URL: db.url }),
    );
    await publishObject(
      nc,
      cluster,
      'postgrespolicy',
      policyObject(NAMESPACE, req.policy.name, req.policy.uid ?? '', 'plan-cl-never-conn', content),
    );
    await publishRequest(nc, topology, req);

    expect(await finalResult('plan-cl-never')).toMatchObject({ phase: 'Skipped', reason: 'PlanGone' });
    expect(resultsOf('plan-cl-never')).toHaveLength(1);
    expect(await roleExists(db.url, name)).toBe(false);
  }, 60_000);
  it('two replicas, 6 databases, each request sent twice: applied once each, one Applying and one Applied patch per plan', async () => {
    apps.push(await startClusterExecutor(topology, cluster, sandbox.url, 1_000));
    const plans = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        const db = await database(`cl_pair_${i}`);
        const name = role(`pair_${i}`);
        const content: PolicyContent = { roles: [{ name, login: false }] };
        const planName = `plan-cl-pair-${i}`;
        const req = await request(planName, db.url, content);
        await publishCluster(planName, req, db.url, content);
        return { db, name, planName, req };
      }),
    );
    for (const { req } of plans) {
      await publishRequest(nc, topology, req);
      await publishRequest(nc, topology, req);
    }
    for (const { db, name, planName } of plans) {
      const done = await eventually(
        `two final results of ${planName}`,
        () => {
          const found = resultsOf(planName).filter((r) => r.phase !== 'Applying');
          return found.length >= 2 ? found : undefined;
        },
        60_000,
      );
      expect(done.map((r) => r.reason).sort()).toEqual(['AlreadyConverged', 'Executed']);
      expect(await roleExists(db.url, name)).toBe(true);
    }
    const patches = await eventually('every plan patched Applying and Applied', async () => {
      const all = (await commandsSent(nc, cluster)).filter((c) => c.target.name.startsWith('plan-cl-pair-'));
      return all.length >= 12 ? all : undefined;
    });
    for (const { planName } of plans) {
      const phases = patches
        .filter((p) => p.target.name === planName)
        .map((p) => (p.command === 'patch-status' ? p.status['phase'] : p.command));
      expect(phases).toEqual(['Applying', 'Applied']);
    }
  }, 120_000);
});
