// Ephemeral access plans through the real services (ADR 0008): a private nats-server with the production
// streams, the API emulator with the CRDs, the k8s-gateway, inspector, planner and executor, and a sandbox
// PostgreSQL database (PG_MAJORS selects the server). The test plays the access-scheduler: it writes request status and scoped plans
// through the API and sends `rp.execute.scoped.request`; it reads `rp.execute.scoped.result` and
// pg_auth_members. The planner's authoritative reconcile of the base policy runs alongside.
import { AckPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { fileURLToPath } from 'node:url';
import type { INestApplication } from '@nestjs/common';
import { targetOfUrl } from '@rolepolicy/catalog';
import {
  JetStreamPublisher,
  STREAMS,
  SUBJECTS,
  auditRecordsIn,
  decodePayload,
  scopedExecuteRequestContract,
  scopedRequestSubject,
  scopedRevokeRequestContract,
  scopedExecuteResultContract,
  SWEEP_BUNDLE,
  type ScopedExecuteRequestV1,
  type ScopedExecuteResultV1,
} from '@rolepolicy/contracts';
import { GROUP, KIND_NAMES, VERSION } from '@rolepolicy/kube';
import {
  BUNDLE_ENCODING,
  bundleHash,
  canonicalBundle,
  logicalFingerprint,
  scopedPlanName,
  type BundleMembership,
} from '@rolepolicy/policy';
import { startService, type EnvSpec, type ServiceDefinition } from '@rolepolicy/runtime';
import {
  inspectSealEnv,
  createPostgresSandbox,
  eventually,
  freePort,
  postgresTargets,
  sandboxId,
  startEmulator,
  startPrivateNatsServer,
  type Emulator,
  type PostgresSandbox,
  type PrivateNatsServer,
} from '@rolepolicy/testing';
import pg from 'pg';
import { inspectorService } from '../../../inspector/src/service.js';
import { k8sGatewayService } from '../../../k8s-gateway/src/service.js';
import { plannerService } from '../../../planner/src/service.js';
import { executorService } from '../service.js';

const CRD_DIR = fileURLToPath(new URL('../../../../deploy/crds', import.meta.url));
const NS = 'scoped-int';
const TIMEOUT_MS = 90_000;
const API_VERSION = `${GROUP}/${VERSION}`;
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const id = sandboxId();
const role = (base: string): string => `rp_sc_${id}_${base}`;
const ALICE = role('alice');
const BOB = role('bob');
const READER = role('reader');
const WRITER = role('writer');
const AUDITOR = role('auditor');
/** Roles privileged in the database only (made out of band): the access policies do not say so. */
const OPS_FILES = role('ops_files');
const OPS_SUPER = role('ops_super');
const OPS_NESTED = role('ops_nested');

let nats: PrivateNatsServer;
let emulator: Emulator;
let db: PostgresSandbox;
let custom: CustomObjectsApi;
let nc: NatsConnection;
let publisher: JetStreamPublisher;
let sql: pg.Client;
let fingerprint: string;
let policyUid: string;
/** Each access policy's uid and generation, as resolvedAccess records them. */
const accessPolicies = new Map<string, { uid: string; generation: number }>();
const apps: INestApplication[] = [];
const results = new Map<string, ScopedExecuteResultV1[]>();
/** Everything the services printed, to prove no connection secret is ever shown. */
const logged: string[] = [];
/** The audit lines the executor wrote (docs/audit.md). */
const audited: string[] = [];
/** The connection URL in the Secret, with a password (trust auth ignores it; it must never be shown). */
let secretUrl: string;
let secretPassword: string;
const writes = {
  out: process.stdout.write.bind(process.stdout),
  err: process.stderr.write.bind(process.stderr),
};

/** Keeps service logs out of the test output (RP_TEST_VERBOSE shows them). */
function quietServices(): void {
  const capture =
    (forward: (chunk: string | Uint8Array) => boolean) =>
    (chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      if (text.includes('"context":"audit"')) {
        audited.push(...text.split('\n'));
        return process.env['RP_TEST_VERBOSE']
          ? (forward as (...a: unknown[]) => boolean)(chunk, ...rest)
          : true;
      }
      if (text.includes('[Nest]')) logged.push(text);
      if (!text.includes('[Nest]') || process.env['RP_TEST_VERBOSE']) {
        return (forward as (...a: unknown[]) => boolean)(chunk, ...rest);
      }
      return true;
    };
  process.stdout.write = capture(writes.out) as typeof process.stdout.write;
  process.stderr.write = capture(writes.err) as typeof process.stderr.write;
}

async function start(def: unknown, extra: Record<string, string> = {}): Promise<void> {
  const env = {
    NATS_URL: nats.url,
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: String(await freePort()),
    LOG_LEVEL: 'log',
    ...inspectSealEnv(),
    ...extra,
  };
  apps.push(await startService(def as ServiceDefinition<EnvSpec>, { env }));
}

type Kind = 'PostgresPolicy' | 'PostgresPolicyPlan' | 'EphemeralAccessRequest' | 'EphemeralAccessPolicy';
type Obj = { metadata: Record<string, any>; spec?: any; status?: any };
const coords = (kind: Kind) => ({
  group: GROUP,
  version: VERSION,
  plural: KIND_NAMES[kind].plural,
  namespace: NS,
});
const read = async (kind: Kind, name: string): Promise<Obj> =>
  (await custom.getNamespacedCustomObject({ ...coords(kind), name })) as Obj;
const patchStatus = (kind: Kind, name: string, status: Record<string, unknown>) =>
  custom.patchNamespacedCustomObjectStatus({ ...coords(kind), name, body: { status } }, merge);
const condition = (obj: Obj, type: string) =>
  (obj.status?.conditions ?? []).find((c: { type: string }) => c.type === type);

/** A request as the access-scheduler would have resolved it. */
interface Req {
  readonly name: string;
  readonly uid: string;
  readonly hash: string;
  readonly memberships: readonly BundleMembership[];
}

/** Creates a request and writes its status (phase, resolvedAccess) as the scheduler would. */
async function createRequest(
  name: string,
  memberships: BundleMembership[],
  phase: string,
  options: {
    readonly fingerprint?: string;
    readonly accessPolicy?: string;
    readonly grantedDuration?: string;
  } = {},
): Promise<Req> {
  const accessPolicy = options.accessPolicy ?? 'temporary-write';
  const recorded = accessPolicies.get(accessPolicy) ?? { uid: 'no-such-access-policy', generation: 1 };
  const created = (await custom.createNamespacedCustomObject({
    ...coords('EphemeralAccessRequest'),
    body: {
      apiVersion: API_VERSION,
      kind: 'EphemeralAccessRequest',
      metadata: { name },
      spec: {
        accessPolicyRef: { name: accessPolicy },
        subject: { role: ALICE },
        requestedBy: { username: 'alice@example.com' },
      },
    },
  })) as Obj;
  const bundle = canonicalBundle(memberships);
  const target = options.fingerprint ?? fingerprint;
  const hash = bundleHash({ targetDatabaseFingerprint: target, memberships: bundle });
  await patchStatus('EphemeralAccessRequest', name, {
    phase,
    resolvedAccess: {
      accessPolicyGeneration: recorded.generation,
      accessPolicyUid: recorded.uid,
      bundleEncoding: BUNDLE_ENCODING,
      bundleHash: hash,
      grantedDuration: options.grantedDuration ?? '600s',
      memberships: bundle,
      targetDatabaseFingerprint: target,
      targetPolicyGeneration: 1,
      targetPolicyUid: policyUid,
    },
  });
  return { name, uid: created.metadata['uid'] as string, hash, memberships: bundle };
}

/** Creates an EphemeralAccessPolicy on the base policy and records its uid and generation. */
async function createAccessPolicy(
  name: string,
  roles: readonly string[],
  extra: Record<string, unknown> = {},
): Promise<void> {
  const created = (await custom.createNamespacedCustomObject({
    ...coords('EphemeralAccessPolicy'),
    body: {
      apiVersion: API_VERSION,
      kind: 'EphemeralAccessPolicy',
      metadata: { name },
      spec: {
        approval: { mode: 'Automatic' },
        justification: { required: false },
        maximumDuration: '1h',
        memberships: roles.map((r) => ({ role: r, inherit: true })),
        postgresPolicyRef: { name: 'base' },
        ...extra,
      },
    },
  })) as Obj;
  accessPolicies.set(name, {
    uid: created.metadata['uid'] as string,
    generation: created.metadata['generation'] as number,
  });
}

/** Creates the scoped plan of `req` as the scheduler does (controller-owned by the request, phase Applying). */
async function createScopedPlan(
  req: Req,
  operation: 'Activate' | 'Revoke',
  phase = 'Applying',
): Promise<string> {
  const name = scopedPlanName(req, operation, req.hash);
  await custom.createNamespacedCustomObject({
    ...coords('PostgresPolicyPlan'),
    body: {
      apiVersion: API_VERSION,
      kind: 'PostgresPolicyPlan',
      metadata: {
        name,
        labels: { 'rolepolicy.io/policy': 'base', 'rolepolicy.io/access-request': req.name },
        ownerReferences: [
          {
            apiVersion: API_VERSION,
            kind: 'EphemeralAccessRequest',
            name: req.name,
            uid: req.uid,
            controller: true,
          },
        ],
      },
      spec: {
        managedDatabaseIdentity: 'scoped-int',
        policyGeneration: 1,
        policyRef: { name: 'base' },
        reconciliationMode: 'authoritative',
        ownedRoles: [...new Set([...req.memberships.map((m) => m.role), ALICE])].sort(),
        ownedSchemas: [],
        origin: { kind: 'EphemeralAccessRequest', name: req.name, uid: req.uid },
        scope: { kind: 'MembershipBundle', operation, bundleHash: req.hash },
      },
    },
  });
  const now = new Date().toISOString();
  await patchStatus('PostgresPolicyPlan', name, {
    phase,
    ...(phase === 'Applied' ? { appliedAt: now } : { applyingSince: now }),
    conditions: [{ type: 'Scoped', status: 'True', reason: operation }],
  });
  return name;
}

/** Sends a scoped execution request for `req` (`attempt` > 1: a re-send) and waits for its new result. */
async function execute(
  req: Req,
  operation: 'Activate' | 'Revoke',
  attempt = 1,
  subject = scopedRequestSubject(operation),
): Promise<ScopedExecuteResultV1> {
  const ref = (kind: string, name: string, uid: string) => ({
    apiVersion: API_VERSION,
    kind,
    namespace: NS,
    name,
    uid,
  });
  const message: ScopedExecuteRequestV1 = {
    v: 1,
    plan: {
      apiVersion: API_VERSION,
      kind: 'PostgresPolicyPlan',
      namespace: NS,
      name: scopedPlanName(req, operation, req.hash),
    },
    request: ref('EphemeralAccessRequest', req.name, req.uid),
    policy: ref('PostgresPolicy', 'base', policyUid),
    operation,
    bundleHash: req.hash,
    idempotencyKey: `${req.uid}/${operation}/${req.hash}`,
  };
  const seen = results.get(message.idempotencyKey)?.length ?? 0;
  const msgId = attempt === 1 ? message.idempotencyKey : `${message.idempotencyKey}/attempt-${attempt}`;
  // Revokes travel on their own subject and durable (ADR 0013).
  await publisher.publish(
    subject === SUBJECTS.scopedRevokeRequest ? scopedRevokeRequestContract : scopedExecuteRequestContract,
    subject,
    message,
    msgId,
  );
  return eventually(
    `the ${operation} result of ${req.name}`,
    () => results.get(message.idempotencyKey)?.[seen],
    30_000,
  );
}

/** Whether `member` is a member of `granted` in pg_auth_members. */
async function member(granted: string, of: string): Promise<boolean> {
  const { rows } = await sql.query(
    `SELECT 1 FROM pg_auth_members am JOIN pg_roles r ON r.oid = am.roleid JOIN pg_roles m ON m.oid = am.member
      WHERE r.rolname = $1 AND m.rolname = $2`,
    [granted, of],
  );
  return rows.length > 0;
}

let forced = 0;
/** Asks for a reconcile of the base policy (the force-reconcile annotation); returns the value written. */
async function requestReconcile(): Promise<string> {
  forced += 1;
  const value = `force-${forced}`;
  await custom.patchNamespacedCustomObject(
    {
      ...coords('PostgresPolicy'),
      name: 'base',
      body: { metadata: { annotations: { 'rolepolicy.io/reconcile-requested-at': value } } },
    },
    merge,
  );
  return value;
}

/** Forces a reconcile of the base policy and returns it once a successful pass handled it. */
async function forceReconcile(): Promise<Obj> {
  const value = await requestReconcile();
  return eventually(
    `reconcile ${value} handled`,
    async () => {
      const policy = await read('PostgresPolicy', 'base');
      return policy.status?.lastHandledReconcileAt === value ? policy : undefined;
    },
    30_000,
  );
}

/** Waits until the base policy is Ready=True/Reconciled at its current generation. */
async function reconciled(): Promise<Obj> {
  return eventually(
    'the base policy Reconciled',
    async () => {
      const policy = await read('PostgresPolicy', 'base');
      const ready = condition(policy, 'Ready');
      return ready?.status === 'True' &&
        ready.reason === 'Reconciled' &&
        policy.status?.observed_generation === policy.metadata['generation']
        ? policy
        : undefined;
    },
    45_000,
  );
}

async function followResults(): Promise<void> {
  const jsm = await jetstreamManager(nc);
  await jsm.consumers.add(STREAMS.execute, {
    durable_name: 'access-scheduler-scoped-results',
    filter_subject: SUBJECTS.scopedExecuteResult,
    ack_policy: AckPolicy.Explicit,
  });
  const consumer = await jetstream(nc).consumers.get(STREAMS.execute, 'access-scheduler-scoped-results');
  const messages = await consumer.consume();
  void (async () => {
    for await (const m of messages) {
      const decoded = decodePayload(scopedExecuteResultContract, m.data);
      if (decoded.ok) {
        const list = results.get(decoded.value.idempotencyKey) ?? [];
        list.push(decoded.value);
        results.set(decoded.value.idempotencyKey, list);
      }
      m.ack();
    }
  })();
}

beforeAll(async () => {
  quietServices();
  nats = await startPrivateNatsServer();
  emulator = await startEmulator({ crdDir: CRD_DIR });
  // PG_MAJORS picks the server (default: the system PostgreSQL); e.g. PG_MAJORS=17 for per-grant inherit.
  db = await createPostgresSandbox('scoped', postgresTargets()[0]);
  const target = targetOfUrl(db.url);
  fingerprint = logicalFingerprint(target.host, target.port, target.database);
  const kc = emulator.kubeConfig(NS);
  custom = kc.makeApiClient(CustomObjectsApi);
  // The gateway first: it creates the NATS topology the other services bind to (ADR 0022).
  await start(k8sGatewayService, {
    KUBECONFIG: emulator.kubeconfigPath,
    LEASE_NAMESPACE: NS,
    LEASE_RETRY_MS: '250',
    WATCH_NAMESPACE: '',
  });
  await start(inspectorService);
  // The operator lets this namespace's access policies opt in to privileged roles (ADR 0021).
  await start(executorService, { EPHEMERAL_ACCESS_PRIVILEGED_NAMESPACES: NS });
  await start(plannerService);
  nc = await connect({ servers: nats.url });
  publisher = new JetStreamPublisher(nc);
  await followResults();
  sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
  const url = new URL(db.url);
  if (url.password === '') url.password = 'Scoped-Secret-Pa55';
  secretUrl = url.toString();
  secretPassword = decodeURIComponent(url.password);
  await kc.makeApiClient(CoreV1Api).createNamespacedSecret({
    namespace: NS,
    body: { metadata: { name: 'db' }, data: { DATABASE_URL: Buffer.from(secretUrl).toString('base64') } },
  });
  const policy = (await custom.createNamespacedCustomObject({
    ...coords('PostgresPolicy'),
    body: {
      apiVersion: API_VERSION,
      kind: 'PostgresPolicy',
      metadata: { name: 'base' },
      spec: {
        connection: { secretRef: { name: 'db' } },
        mode: 'apply',
        approval: 'auto',
        reconciliation_mode: 'authoritative',
        roles: [
          { name: ALICE, login: true },
          { name: BOB, login: true },
          { name: READER, login: false },
          { name: WRITER, login: false },
          { name: AUDITOR, login: false },
        ],
        memberships: [{ role: READER, members: [{ name: ALICE }] }],
      },
    },
  })) as Obj;
  policyUid = policy.metadata['uid'] as string;
  await createAccessPolicy('temporary-write', [READER, WRITER, AUDITOR]);
  // Privileged in the database only: one is a member of a predefined role, one is a superuser, one reaches
  // the superuser through a membership. The base policy does not manage them.
  await sql.query(`CREATE ROLE "${OPS_FILES}" NOLOGIN; GRANT pg_read_server_files TO "${OPS_FILES}";
    CREATE ROLE "${OPS_SUPER}" NOLOGIN SUPERUSER;
    CREATE ROLE "${OPS_NESTED}" NOLOGIN; GRANT "${OPS_SUPER}" TO "${OPS_NESTED}"`);
  await createAccessPolicy('ops', [OPS_FILES, OPS_SUPER, OPS_NESTED]);
  await createAccessPolicy('ops-allowed', [OPS_FILES], { allowPrivilegedRoles: true });
  await reconciled();
}, TIMEOUT_MS);

afterAll(async () => {
  for (const app of apps.reverse()) await app.close().catch(() => undefined);
  process.stdout.write = writes.out;
  process.stderr.write = writes.err;
  await sql?.end().catch(() => undefined);
  await nc?.close().catch(() => undefined);
  if (db !== undefined) {
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    for (const name of [
      ALICE,
      BOB,
      READER,
      WRITER,
      AUDITOR,
      role('extra'),
      OPS_NESTED,
      OPS_SUPER,
      OPS_FILES,
    ]) {
      await admin.query(`DROP ROLE IF EXISTS "${name}"`);
    }
    await admin.end();
  }
  await db?.drop();
  await nats?.dispose();
  await emulator?.stop();
});

let r1: Req;

test(
  'Activate grants the bundle in one transaction, and the authoritative reconcile keeps the overlay edge',
  async () => {
    r1 = await createRequest('r1', [{ role: WRITER, member: ALICE, inherit: true }], 'Applying');
    await createScopedPlan(r1, 'Activate');
    const result = await execute(r1, 'Activate');
    expect(result).toMatchObject({ outcome: 'Applied', reason: 'MembershipsGranted', retained: [] });
    expect(result.statements).toEqual([
      expect.stringMatching(new RegExp(`^GRANT "${WRITER}" TO "${ALICE}"`)),
    ]);
    expect(await member(WRITER, ALICE)).toBe(true);

    // The scheduler records the outcome; the planner's pass keeps the edge the active request holds.
    await patchStatus('PostgresPolicyPlan', scopedPlanName(r1, 'Activate', r1.hash), {
      phase: 'Applied',
      appliedAt: new Date().toISOString(),
    });
    await patchStatus('EphemeralAccessRequest', 'r1', { phase: 'Active' });
    const policy = await forceReconcile();
    expect(condition(policy, 'Ready')).toMatchObject({ status: 'True', reason: 'Reconciled' });
    expect(await member(WRITER, ALICE)).toBe(true);
    expect(await member(READER, ALICE)).toBe(true);

    // The same Activate sent again once its plan is Applied runs nothing again.
    const again = await execute(r1, 'Activate', 2);
    expect(again).toMatchObject({ outcome: 'Applied', reason: 'AlreadyApplied', statements: [] });
  },
  TIMEOUT_MS,
);

test(
  'a forged request status holds nothing: its Revoke is refused, and the authoritative reconcile removes its stray edge',
  async () => {
    await sql.query(`GRANT "${AUDITOR}" TO "${ALICE}"`);
    const forged = await createRequest('forged', [{ role: AUDITOR, member: ALICE, inherit: true }], 'Active');
    await createScopedPlan(forged, 'Revoke');
    const refused = await execute(forged, 'Revoke');
    expect(refused).toMatchObject({ outcome: 'Failed', reason: 'NoActivationAnchor', statements: [] });
    expect(refused.message).toContain(`uid ${forged.uid}`);

    await forceReconcile();
    await reconciled();
    await eventually('the stray edge revoked', async () => !(await member(AUDITOR, ALICE)), 30_000);
    expect(await member(WRITER, ALICE)).toBe(true);
    await patchStatus('EphemeralAccessRequest', 'forged', { phase: 'Ended' });
  },
  TIMEOUT_MS,
);

test(
  'Revoke removes only its own edges: base-policy edges are retained, edges another active request holds are kept',
  async () => {
    const r2 = await createRequest(
      'r2',
      [
        { role: READER, member: ALICE, inherit: true },
        { role: WRITER, member: ALICE, inherit: true },
        { role: AUDITOR, member: ALICE, inherit: true },
      ],
      'Active',
    );
    await createScopedPlan(r2, 'Activate', 'Applied');
    await sql.query(`GRANT "${AUDITOR}" TO "${ALICE}"`);
    await createScopedPlan(r2, 'Revoke');
    const result = await execute(r2, 'Revoke');
    await patchStatus('EphemeralAccessRequest', 'r2', { phase: 'Ended' });
    expect(result).toMatchObject({
      outcome: 'Applied',
      reason: 'MembershipsRevoked',
      retained: [{ role: READER, member: ALICE, inherit: true }],
    });
    expect(result.statements).toEqual([`REVOKE "${AUDITOR}" FROM "${ALICE}";`]);
    expect(result.message).toContain('kept for other active requests');
    expect(await member(AUDITOR, ALICE)).toBe(false);
    expect(await member(READER, ALICE)).toBe(true);
    expect(await member(WRITER, ALICE)).toBe(true);
  },
  TIMEOUT_MS,
);

/** Sends a Sweep of the base policy, as any sender of the revocation subject could, and waits for its result. */
async function sweep(): Promise<ScopedExecuteResultV1> {
  const ref = {
    apiVersion: API_VERSION,
    kind: 'PostgresPolicy',
    namespace: NS,
    name: 'base',
    uid: policyUid,
  };
  const message: ScopedExecuteRequestV1 = {
    v: 1,
    plan: ref,
    request: ref,
    policy: ref,
    operation: 'Sweep',
    bundleHash: SWEEP_BUNDLE,
    idempotencyKey: `${policyUid}/Sweep/${Date.now()}`,
  };
  await publisher.publish(
    scopedRevokeRequestContract,
    scopedRequestSubject('Sweep'),
    message,
    message.idempotencyKey,
  );
  return eventually('the Sweep result', () => results.get(message.idempotencyKey)?.[0], 30_000);
}

test(
  'a Sweep revokes only bundle edges nobody holds: declared, anchored and foreign edges stay, nothing is granted',
  async () => {
    const outsider = role('outsider');
    // Orphaned: a bundle role (temporary-write lists it) to a role of the policy, neither declared nor held.
    // Kept: READER -> ALICE (declared), WRITER -> ALICE (r1 holds it, anchored), READER -> outsider (not a
    // role of the policy), and ALICE's other memberships (not bundle roles).
    await sql.query(`CREATE ROLE "${outsider}" NOLOGIN; GRANT "${AUDITOR}" TO "${ALICE}";
      GRANT "${READER}" TO "${outsider}"; GRANT "${WRITER}" TO "${BOB}"`);
    try {
      const result = await sweep();
      expect(result).toMatchObject({ outcome: 'Applied', reason: 'MembershipsSwept' });
      expect(result.statements).toEqual([
        `REVOKE "${AUDITOR}" FROM "${ALICE}";`,
        `REVOKE "${WRITER}" FROM "${BOB}";`,
      ]);
      expect(await member(AUDITOR, ALICE)).toBe(false);
      expect(await member(WRITER, BOB)).toBe(false);
      expect(await member(WRITER, ALICE)).toBe(true);
      expect(await member(READER, ALICE)).toBe(true);
      expect(await member(READER, outsider)).toBe(true);
      // The audit trail names the revoked edges, about the policy (a sweep has no request).
      const swept = auditRecordsIn(audited).filter(
        (r) => r.event === 'membership.revoked' && r.operation === 'Sweep',
      );
      expect(swept.at(-1)).toMatchObject({
        object: { kind: 'PostgresPolicy' },
        request: null,
        bundleHash: null,
        memberships: [
          { role: AUDITOR, member: ALICE },
          { role: WRITER, member: BOB },
        ],
      });
      expect(JSON.stringify(swept)).not.toContain(secretPassword);
      // Nothing left to sweep: a second one runs no statement.
      expect(await sweep()).toMatchObject({ outcome: 'Applied', reason: 'NothingToSweep', statements: [] });

      // An activation in flight (granted, its result not recorded yet: request and plan still Applying)
      // holds its edge through its anchor: the sweep keeps it.
      const inflight = await createRequest(
        'inflight',
        [{ role: AUDITOR, member: ALICE, inherit: true }],
        'Applying',
      );
      await createScopedPlan(inflight, 'Activate');
      expect(await execute(inflight, 'Activate')).toMatchObject({
        outcome: 'Applied',
        reason: 'MembershipsGranted',
      });
      expect(await sweep()).toMatchObject({ outcome: 'Applied', reason: 'NothingToSweep', statements: [] });
      expect(await member(AUDITOR, ALICE)).toBe(true);
      // Its result lost and the request ended Failed (ADR 0021's race): no anchor, so the sweep revokes
      // (here the planner's authoritative reconcile may get there first; e2e/ephemeral-integrity is additive).
      await patchStatus('EphemeralAccessRequest', 'inflight', { phase: 'Failed' });
      await eventually(
        'the edge of the Failed request gone',
        async () => {
          const swept = await sweep();
          return swept.reason === 'MembershipsSwept' || !(await member(AUDITOR, ALICE)) ? swept : undefined;
        },
        30_000,
      );
      expect(await member(AUDITOR, ALICE)).toBe(false);
    } finally {
      await sql.query(`DROP ROLE IF EXISTS "${outsider}"`);
    }
  },
  TIMEOUT_MS,
);

test(
  'the escape check refuses a bundle granting to anyone but the subject, and the overlay ignores it',
  async () => {
    const escape = await createRequest('escape', [{ role: WRITER, member: BOB, inherit: true }], 'Applying');
    await createScopedPlan(escape, 'Activate');
    const result = await execute(escape, 'Activate');
    expect(result).toMatchObject({ outcome: 'Failed', reason: 'EscapeCheckFailed', statements: [] });
    expect(result.message).toContain(`not to the request's subject ${ALICE}`);
    const policy = await forceReconcile();
    expect(condition(policy, 'Ready')).toMatchObject({ status: 'True', reason: 'Reconciled' });
    expect(await member(WRITER, BOB)).toBe(false);
    await patchStatus('EphemeralAccessRequest', 'escape', { phase: 'Failed' });
  },
  TIMEOUT_MS,
);

test(
  'an Activate sent on the revocation subject is refused and grants nothing',
  async () => {
    const wrong = await createRequest('wrong', [{ role: AUDITOR, member: BOB, inherit: true }], 'Applying');
    await createScopedPlan(wrong, 'Activate');
    const result = await execute(wrong, 'Activate', 1, SUBJECTS.scopedRevokeRequest);
    expect(result).toMatchObject({ outcome: 'Failed', reason: 'WrongSubject', statements: [] });
    expect(await member(AUDITOR, BOB)).toBe(false);
    await patchStatus('EphemeralAccessRequest', 'wrong', { phase: 'Failed' });
  },
  TIMEOUT_MS,
);

test(
  'a changed target fingerprint blocks the scoped plan, and blocks the durable reconcile with EphemeralAccessConflict',
  async () => {
    const moved = await createRequest(
      'moved',
      [{ role: AUDITOR, member: ALICE, inherit: true }],
      'Applying',
      {
        fingerprint: logicalFingerprint('db.elsewhere.example', 5432, 'other'),
      },
    );
    await createScopedPlan(moved, 'Activate');
    const result = await execute(moved, 'Activate');
    expect(result).toMatchObject({ outcome: 'Blocked', reason: 'TargetFingerprintChanged', statements: [] });
    expect(await member(AUDITOR, ALICE)).toBe(false);

    // A failed pass does not record the handled annotation: wait for the condition itself.
    await requestReconcile();
    const blocked = await eventually(
      'the policy blocked by the conflict',
      async () => {
        const policy = await read('PostgresPolicy', 'base');
        return condition(policy, 'Ready')?.reason === 'EphemeralAccessConflict' ? policy : undefined;
      },
      30_000,
    );
    expect(condition(blocked, 'Ready')).toMatchObject({ status: 'False', reason: 'EphemeralAccessConflict' });
    expect(condition(blocked, 'Ready').message).toContain(`request moved (uid ${moved.uid})`);

    await patchStatus('EphemeralAccessRequest', 'moved', { phase: 'Cancelled' });
    const cleared = await forceReconcile();
    expect(condition(cleared, 'Ready')).toMatchObject({ status: 'True', reason: 'Reconciled' });
  },
  TIMEOUT_MS,
);

test(
  'a policy plan executes while access is active: planner and executor compose the same overlay',
  async () => {
    const before = await read('PostgresPolicy', 'base');
    await custom.patchNamespacedCustomObject(
      {
        ...coords('PostgresPolicy'),
        name: 'base',
        body: { spec: { roles: [...before.spec.roles, { name: role('extra'), login: false }] } },
      },
      merge,
    );
    const policy = await reconciled();
    expect(policy.metadata['generation']).toBe(before.metadata['generation'] + 1);
    const { rows } = await sql.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [role('extra')]);
    expect(rows).toHaveLength(1);
    expect(await member(WRITER, ALICE)).toBe(true);
    // The plan of the new generation ran: the executor's re-plan found the digest the planner approved.
    const plans = (
      (await custom.listNamespacedCustomObject(coords('PostgresPolicyPlan'))) as { items: Obj[] }
    ).items.filter((p) => p.spec.scope == null && p.spec.policyGeneration === policy.metadata['generation']);
    expect(plans.map((p) => p.status?.phase)).toEqual(['Applied']);
  },
  TIMEOUT_MS,
);

test(
  'Revoke of the active request removes its membership; the policy converges without it',
  async () => {
    await patchStatus('EphemeralAccessRequest', 'r1', { phase: 'Revoking' });
    await createScopedPlan(r1, 'Revoke');
    const result = await execute(r1, 'Revoke');
    expect(result).toMatchObject({ outcome: 'Applied', reason: 'MembershipsRevoked', retained: [] });
    expect(result.statements).toEqual([`REVOKE "${WRITER}" FROM "${ALICE}";`]);
    expect(await member(WRITER, ALICE)).toBe(false);
    await patchStatus('EphemeralAccessRequest', 'r1', { phase: 'Ended' });
    const policy = await forceReconcile();
    expect(condition(policy, 'Ready')).toMatchObject({ status: 'True', reason: 'Reconciled' });
    expect(await member(WRITER, ALICE)).toBe(false);
  },
  TIMEOUT_MS,
);

test(
  'a tampered resolvedAccess granting a role its EphemeralAccessPolicy does not list grants nothing',
  async () => {
    // Written first by someone who may patch request status (an approver), or sent by a compromised
    // scheduler: the snapshot verifies (its hash is recomputed), the plan matches, the policy does not list BOB.
    const tampered = await createRequest(
      'tampered',
      [{ role: BOB, member: ALICE, inherit: true }],
      'Applying',
    );
    await createScopedPlan(tampered, 'Activate');
    const result = await execute(tampered, 'Activate');
    expect(result).toMatchObject({
      outcome: 'Failed',
      reason: 'MembershipNotInAccessPolicy',
      statements: [],
    });
    expect(result.message).toContain(
      `grants role ${BOB}, which EphemeralAccessPolicy ${NS}/temporary-write does not list in spec.memberships`,
    );
    expect(await member(BOB, ALICE)).toBe(false);

    // Longer than the policy's maximumDuration (1h): refused too.
    const long = await createRequest('long', [{ role: AUDITOR, member: ALICE, inherit: true }], 'Applying', {
      grantedDuration: '86400s',
    });
    await createScopedPlan(long, 'Activate');
    expect(await execute(long, 'Activate')).toMatchObject({
      outcome: 'Failed',
      reason: 'DurationExceedsMaximum',
    });
    expect(await member(AUDITOR, ALICE)).toBe(false);
    await patchStatus('EphemeralAccessRequest', 'tampered', { phase: 'Failed' });
    await patchStatus('EphemeralAccessRequest', 'long', { phase: 'Failed' });
  },
  TIMEOUT_MS,
);

test(
  'roles privileged in the database (SUPERUSER, pg_* membership, through a chain) are refused unless the access policy opts in',
  async () => {
    const ops = await createRequest(
      'ops',
      [
        { role: OPS_FILES, member: ALICE, inherit: true },
        { role: OPS_SUPER, member: ALICE, inherit: true },
        { role: OPS_NESTED, member: ALICE, inherit: true },
      ],
      'Applying',
      { accessPolicy: 'ops' },
    );
    await createScopedPlan(ops, 'Activate');
    const refused = await execute(ops, 'Activate');
    expect(refused).toMatchObject({ outcome: 'Failed', reason: 'PrivilegedRole', statements: [] });
    expect(refused.message).toContain(
      `role ${OPS_FILES} is a member of pg_read_server_files, which is a predefined role`,
    );
    expect(refused.message).toContain(`role ${OPS_SUPER} has SUPERUSER`);
    expect(refused.message).toContain(`role ${OPS_NESTED} is a member of ${OPS_SUPER}, which has SUPERUSER`);
    expect(refused.message).toContain('spec.allowPrivilegedRoles is not true');
    for (const granted of [OPS_FILES, OPS_SUPER, OPS_NESTED])
      expect(await member(granted, ALICE)).toBe(false);
    await patchStatus('EphemeralAccessRequest', 'ops', { phase: 'Failed' });

    // The policy opts in and the operator lists this namespace (EPHEMERAL_ACCESS_PRIVILEGED_NAMESPACES).
    const allowed = await createRequest(
      'ops-allowed',
      [{ role: OPS_FILES, member: ALICE, inherit: true }],
      'Applying',
      {
        accessPolicy: 'ops-allowed',
      },
    );
    await createScopedPlan(allowed, 'Activate');
    expect(await execute(allowed, 'Activate')).toMatchObject({
      outcome: 'Applied',
      reason: 'MembershipsGranted',
    });
    expect(await member(OPS_FILES, ALICE)).toBe(true);
    await patchStatus('EphemeralAccessRequest', 'ops-allowed', { phase: 'Ended' });
    await sql.query(`REVOKE "${OPS_FILES}" FROM "${ALICE}"`);
  },
  TIMEOUT_MS,
);

test('no connection secret reaches a scoped result or a service log line', () => {
  const published = JSON.stringify([...results.values()]);
  expect(published.length).toBeGreaterThan(100);
  for (const text of [published, logged.join('')]) {
    expect(text).not.toContain(secretPassword);
    expect(text).not.toContain(secretUrl);
    expect(text).not.toMatch(/postgres(ql)?:\/\/[^\s"]*@/);
  }
});
