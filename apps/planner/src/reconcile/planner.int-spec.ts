// The planner wired for real: a private nats-server (production streams and subjects), the API emulator
// with the CRDs, the real k8s-gateway, inspector and planner, and a sandbox PostgreSQL database. A policy
// created through client-node gets a Pending plan whose digest equals an independent re-plan with the
// same target reference, and status conditions; a generated password Secret is created once, owned;
// with the real executor an apply-mode policy converges (roles created, password set, status Reconciled).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { inspect, openConnection } from '@rolepolicy/catalog';
import { GROUP, KIND_NAMES, VERSION, generatedSecretName } from '@rolepolicy/kube';
import {
  changeDigest,
  computePlan,
  deriveManagedScope,
  expandPolicy,
  type PolicyContent,
} from '@rolepolicy/policy';
import {
  createPostgresSandbox,
  eventually,
  sandboxId,
  startServiceCluster,
  type PostgresSandbox,
  type ServiceCluster,
} from '@rolepolicy/testing';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import pg from 'pg';
import { runCli } from '../../../cli/src/test-support/run-cli.js';
import { executorService } from '../../../executor/src/service.js';
import { inspectorService } from '../../../inspector/src/service.js';
import { k8sGatewayService } from '../../../k8s-gateway/src/service.js';
import { plannerService } from '../service.js';

const REVIEW_SCHEMA = fileURLToPath(
  new URL('../../../../deploy/schemas/review-artifact.v2.json', import.meta.url),
);
type AddFormats = (ajv: Ajv) => Ajv;
const addFormats: AddFormats =
  (addFormatsModule as unknown as { default?: AddFormats }).default ??
  (addFormatsModule as unknown as AddFormats);
const NS = 'planner-int';
const TIMEOUT_MS = 60_000;
const id = sandboxId();
const role = (base: string): string => `rp_pl_${id}_${base}`;

/** The services, whose logs (the planner at `log` level) must never show a Secret value. */
let cluster: ServiceCluster | undefined;
let db: PostgresSandbox;
let custom: CustomObjectsApi;
let core: CoreV1Api;
let plannerUrl: string;
const coords = (kind: 'PostgresPolicy' | 'PostgresPolicyPlan') => ({
  group: GROUP,
  version: VERSION,
  plural: KIND_NAMES[kind].plural,
  namespace: NS,
});

/** Creates a PostgresPolicy in the test namespace, as a user would, and returns the stored object. */
async function createPolicy(name: string, spec: Record<string, unknown>): Promise<Obj> {
  return (await custom.createNamespacedCustomObject({
    ...coords('PostgresPolicy'),
    body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'PostgresPolicy', metadata: { name }, spec },
  })) as Obj;
}

type Obj = { metadata: Record<string, any>; spec?: any; status?: any };

async function plansOf(policyUid: string): Promise<Obj[]> {
  const list = (await custom.listNamespacedCustomObject(coords('PostgresPolicyPlan'))) as { items: Obj[] };
  return list.items.filter((p) =>
    (p.metadata['ownerReferences'] ?? []).some((o: { uid: string }) => o.uid === policyUid),
  );
}

async function readPolicy(name: string): Promise<Obj> {
  return (await custom.getNamespacedCustomObject({ ...coords('PostgresPolicy'), name })) as Obj;
}

const condition = (obj: Obj, type: string) =>
  (obj.status?.conditions ?? []).find((c: { type: string }) => c.type === type);

beforeAll(async () => {
  cluster = await startServiceCluster(NS, k8sGatewayService);
  db = await createPostgresSandbox('planner');
  custom = cluster.kubeConfig.makeApiClient(CustomObjectsApi);
  core = cluster.kubeConfig.makeApiClient(CoreV1Api);
  await cluster.services.start(inspectorService);
  await cluster.services.start(executorService);
  plannerUrl = await cluster.services.start(plannerService);
  await core.createNamespacedSecret({
    namespace: NS,
    body: {
      metadata: { name: 'db' },
      data: { DATABASE_URL: Buffer.from(db.url).toString('base64') },
    },
  });
}, TIMEOUT_MS);

afterAll(async () => {
  await cluster?.stop();
  if (db !== undefined) {
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    for (const name of [role('writer'), role('svc'), role('shared'), role('reader')])
      await admin.query(`DROP ROLE IF EXISTS "${name}"`);
    await admin.end();
  }
  await db?.drop();
});

test(
  'a plan-mode policy gets a Pending plan whose digest matches an independent re-plan, and Planned status',
  async () => {
    const content = {
      roles: [{ name: role('reader'), login: false }],
    };
    const created = await createPolicy('orders', {
      connection: { secretRef: { name: 'db' } },
      mode: 'plan',
      approval: 'manual',
      ...content,
    });
    const uid = created.metadata['uid'] as string;

    const plan = await eventually(
      'a Pending plan',
      async () => (await plansOf(uid)).find((p) => p.status?.phase === 'Pending'),
      30_000,
    );
    expect(plan.spec.policyRef.name).toBe('orders');
    expect(plan.status.sqlInline).toContain('CREATE ROLE');
    expect(condition(plan, 'Approved')).toMatchObject({ status: 'False' });

    // The digest binds the target reference the executor will receive: `namespace/secret/key`.
    const expanded = expandPolicy(created.spec as PolicyContent, { policyName: 'orders' });
    if (!expanded.ok) throw new Error('fixture policy is invalid');
    const scope = deriveManagedScope(expanded.desired);
    const connection = openConnection({ url: db.url });
    try {
      const snapshot = await inspect(connection.db, scope, connection.target);
      const replanned = computePlan({
        desired: expanded.desired,
        snapshot,
        mode: expanded.desired.reconciliation_mode,
        passwordSources: {},
        appliedPasswordSourceVersions: {},
        allowSchemaOwnerTransfers: false,
      });
      const digest = changeDigest({
        mode: expanded.desired.reconciliation_mode,
        target: `${NS}/db/DATABASE_URL`,
        targetPhysicalIdentity: snapshot.identity.physical,
        targetLogicalFingerprint: snapshot.identity.logical_fingerprint,
        ownedRoles: scope.roles,
        ownedSchemas: scope.schemas,
        changes: replanned.changes,
      });
      expect(plan.status.changeDigest).toBe(digest.digest);
      expect(plan.status.changeDigestEncoding).toBe(digest.encoding);
    } finally {
      await connection.close();
    }

    const policy = await eventually(
      'the policy status naming the plan',
      async () => {
        const p = await readPolicy('orders');
        return p.status?.current_plan_ref?.name === plan.metadata['name'] ? p : undefined;
      },
      15_000,
    );
    expect(condition(policy, 'Ready')).toMatchObject({ status: 'True', reason: 'Planned' });
    expect(condition(policy, 'Drifted')).toMatchObject({ status: 'True' });
    expect(policy.status.owned_roles).toEqual([role('reader')]);
    // The connection URL comes from a Secret: the identity names it, never its host or database (ADR 0018).
    expect(policy.status.managed_database_identity).toBe(`${NS}/[Secret "db" key "DATABASE_URL"]`);
    expect(JSON.stringify(policy.status)).not.toContain(db.url);
    const metrics = await (await fetch(`${plannerUrl}/metrics`)).text();
    expect(metrics).toMatch(
      /rp_planner_reconcile_seconds_count\{[^}]*decision="awaiting_approval"[^}]*\} [1-9]/,
    );
  },
  TIMEOUT_MS,
);

test(
  'a manual-approval Pending plan points at its review artifact: a ConfigMap owned by the plan, valid, without secrets',
  async () => {
    const app = role('journal_app');
    const group = role('journal_group');
    const password = 'Journal-Secret-Pa55-review';
    await core.createNamespacedSecret({
      namespace: NS,
      body: { metadata: { name: 'journal-pw' }, data: { [app]: Buffer.from(password).toString('base64') } },
    });
    const created = await createPolicy('journal', {
      connection: { secretRef: { name: 'db' } },
      mode: 'apply',
      approval: 'manual',
      roles: [
        { name: group, login: false },
        { name: app, login: true, password: { secretRef: { name: 'journal-pw' } } },
      ],
      memberships: [{ role: group, members: [{ name: app }] }],
    });
    const uid = created.metadata['uid'] as string;
    const plan = await eventually(
      'a Pending plan',
      async () => (await plansOf(uid)).find((p) => p.status?.phase === 'Pending'),
      30_000,
    );
    const planName = plan.metadata['name'] as string;
    const cmName = plan.metadata['annotations']?.['rolepolicy.io/review-configmap'] as string;
    expect(cmName).toBe(`${planName}-review`);

    const configMap = await eventually(
      'the review ConfigMap',
      () => core.readNamespacedConfigMap({ namespace: NS, name: cmName }).catch(() => undefined),
      15_000,
    );
    expect(configMap.metadata?.labels?.['rolepolicy.io/review-artifact']).toBe('v2');
    expect(configMap.metadata?.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'PostgresPolicyPlan', name: planName, uid: plan.metadata['uid'] }),
    ]);
    const text =
      configMap.data?.['review.json'] ??
      gunzipSync(Buffer.from(configMap.binaryData?.['review.json.gz'] ?? '', 'base64')).toString('utf8');
    const artifact = JSON.parse(text);
    const validate = addFormats(new Ajv({ allErrors: true, strict: true })).compile(
      JSON.parse(readFileSync(REVIEW_SCHEMA, 'utf8')),
    );
    const valid = validate(artifact);
    expect(valid ? [] : validate.errors).toEqual([]);

    expect(artifact.provenance).toMatchObject({
      captured_at: plan.status.computedAt,
      target_label: `${NS}/journal`,
    });
    // The inspector's review facts came with the snapshot: the authority graph is complete.
    expect(artifact.context.authority_graph_complete).toBe(true);
    // The artifact names the plan's changes: one per change the plan summarises, from this policy.
    const kinds = artifact.recorded.changes.map((c: { change: { kind: string } }) => c.change.kind);
    expect(kinds).toEqual(expect.arrayContaining(['create_role', 'add_member', 'set_password']));
    expect(artifact.recorded.changes).toHaveLength(plan.status.changeSummary.total);
    expect(
      artifact.recorded.changes.map((c: { change: { name?: string } }) => c.change.name).filter(Boolean),
    ).toEqual(expect.arrayContaining([app, group]));
    for (const change of artifact.recorded.changes)
      expect(change.source.document).toBe(`PostgresPolicy/${NS}/journal`);
    // A password change makes the SQL preview sensitive; nothing secret reaches the artifact.
    expect(artifact.recorded.sql_preview.status).toBe('omitted');
    expect(text).not.toContain(password);
    expect(text).not.toContain(db.url);
    expect(text).not.toMatch(/SCRAM-SHA-256\$/);
    expect(text).not.toMatch(/postgres(ql)?:\/\//);

    // `rolepolicy review --plan` reads the same document through a kubeconfig.
    const cli = await runCli([
      'review',
      '--plan',
      planName,
      '-n',
      NS,
      '--kubeconfig',
      cluster!.emulator.kubeconfigPath,
      '--format',
      'json',
    ]);
    expect(cli.stderr).toBe('');
    expect(JSON.parse(cli.stdout)).toEqual(artifact);

    // Owned by the plan: deleting the policy deletes its plan, and the garbage collector the ConfigMap.
    await custom.deleteNamespacedCustomObject({ ...coords('PostgresPolicy'), name: 'journal' });
    await eventually(
      'the review ConfigMap deleted with its plan',
      () =>
        core.readNamespacedConfigMap({ namespace: NS, name: cmName }).then(
          () => undefined,
          (error: { code?: number }) => error.code === 404 || undefined,
        ),
      15_000,
    );
  },
  TIMEOUT_MS,
);

test(
  'a generated password Secret is not created for a plan nobody approved: the plan binds it as missing, stably',
  async () => {
    const login = role('App');
    const created = await createPolicy('billing', {
      connection: { secretRef: { name: 'db' } },
      mode: 'plan',
      approval: 'manual',
      roles: [{ name: login, login: true, password: { generate: { length: 20 } } }],
    });
    const uid = created.metadata['uid'] as string;
    const secretName = generatedSecretName('billing', login);
    expect(secretName).toMatch(/^billing-gen-rp-pl-[a-z0-9-]+$/);

    const plan = await eventually(
      'a Pending plan with a password source',
      async () => (await plansOf(uid)).find((p) => p.status?.phase === 'Pending'),
      30_000,
    );
    const absent = async (): Promise<boolean> =>
      core.readNamespacedSecret({ namespace: NS, name: secretName }).then(
        () => false,
        (error: { code?: number }) => error.code === 404,
      );
    expect(await absent()).toBe(true);
    expect(plan.status.passwordSourceDigest).toMatch(/^sha256:/);
    expect(plan.status.sqlInline).toContain("PASSWORD '[REDACTED]'");

    // A forced reconcile re-plans against the same Secret: it is not replaced, the plan is kept.
    await custom.patchNamespacedCustomObject(
      {
        ...coords('PostgresPolicy'),
        name: 'billing',
        body: { metadata: { annotations: { 'rolepolicy.io/reconcile-requested-at': 'now-1' } } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await eventually(
      'the forced reconcile handled',
      async () => (await readPolicy('billing')).status?.lastHandledReconcileAt === 'now-1',
      15_000,
    );
    // The same plan (its digest binds "a password to generate in this Secret"), and still no Secret.
    expect((await plansOf(uid)).map((p) => p.metadata['name'])).toEqual([plan.metadata['name']]);
    expect(await absent()).toBe(true);
  },
  TIMEOUT_MS,
);

test(
  'an apply-mode policy converges through the executor: plan Applied, roles in PostgreSQL, Ready=Reconciled',
  async () => {
    const writer = role('writer');
    const svc = role('svc');
    const created = await createPolicy('ledger', {
      connection: { secretRef: { name: 'db' } },
      mode: 'apply',
      approval: 'auto',
      roles: [
        { name: writer, login: false },
        { name: svc, login: true, password: { generate: {} } },
      ],
    });
    const uid = created.metadata['uid'] as string;
    const plan = await eventually(
      'an Applied plan',
      async () => (await plansOf(uid)).find((p) => p.status?.phase === 'Applied'),
      45_000,
    );
    expect(condition(plan, 'Approved')).toMatchObject({ status: 'True', reason: 'AutoApproved' });
    const policy = await eventually(
      'the policy Reconciled',
      async () => {
        const p = await readPolicy('ledger');
        return condition(p, 'Ready')?.reason === 'Reconciled' ? p : undefined;
      },
      20_000,
    );
    expect(condition(policy, 'Ready')).toMatchObject({ status: 'True' });
    const secretName = generatedSecretName('ledger', svc);
    const secret = await core.readNamespacedSecret({ namespace: NS, name: secretName });
    expect(policy.status.applied_password_source_versions).toEqual({
      [svc]: `${secretName}:password:${secret.metadata?.resourceVersion}`,
    });
    expect(policy.status.observed_generation).toBe(1);

    // Converged: a forced reconcile finds nothing to do (the applied password version is recorded).
    await custom.patchNamespacedCustomObject(
      {
        ...coords('PostgresPolicy'),
        name: 'ledger',
        body: { metadata: { annotations: { 'rolepolicy.io/reconcile-requested-at': 'again' } } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const after = await eventually(
      'the forced reconcile handled',
      async () => {
        const p = await readPolicy('ledger');
        return p.status?.lastHandledReconcileAt === 'again' ? p : undefined;
      },
      15_000,
    );
    expect(condition(after, 'Ready')).toMatchObject({ status: 'True', reason: 'Reconciled' });
    expect(condition(after, 'Drifted')).toMatchObject({ status: 'False' });
    expect((await plansOf(uid)).map((p) => p.metadata['name'])).toEqual([plan.metadata['name']]);

    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const rows = await client.query(
        'SELECT rolname, rolcanlogin, rolpassword FROM pg_authid WHERE rolname = ANY($1) ORDER BY rolname',
        [[writer, svc]],
      );
      expect(rows.rows.map((r) => [r.rolname, r.rolcanlogin])).toEqual(
        [
          [svc, true],
          [writer, false],
        ].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
      );
      expect(rows.rows.find((r) => r.rolname === svc)?.rolpassword).toMatch(/^SCRAM-SHA-256\$/);
    } finally {
      await client.end();
    }
  },
  TIMEOUT_MS,
);

test(
  'two policies claiming one role on one database through different Secrets: the later gets Conflict and no plan',
  async () => {
    await core.createNamespacedSecret({
      namespace: NS,
      body: { metadata: { name: 'db-alias' }, stringData: { DATABASE_URL: db.url } },
    });
    const shared = role('shared');
    const body = (name: string, secret: string) => ({
      ...coords('PostgresPolicy'),
      body: {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: 'PostgresPolicy',
        metadata: { name },
        spec: {
          connection: { secretRef: { name: secret } },
          mode: 'plan',
          approval: 'manual',
          roles: [{ name: shared, login: false }],
        },
      },
    });
    const first = (await custom.createNamespacedCustomObject(body('first', 'db'))) as Obj;
    await eventually(
      'the first policy planned',
      async () => (await plansOf(first.metadata['uid'] as string)).length === 1,
      20_000,
    );
    const second = (await custom.createNamespacedCustomObject(body('second', 'db-alias'))) as Obj;
    const blocked = await eventually(
      'the second policy in conflict',
      async () => {
        const p = await readPolicy('second');
        return condition(p, 'Conflict')?.status === 'True' ? p : undefined;
      },
      20_000,
    );
    expect(condition(blocked, 'Ready')).toMatchObject({ status: 'False', reason: 'ConflictingPolicy' });
    expect(blocked.status.last_error).toContain('first');
    expect(await plansOf(second.metadata['uid'] as string)).toEqual([]);
    expect(condition(await readPolicy('first'), 'Conflict')?.status ?? 'False').toBe('False');
  },
  TIMEOUT_MS,
);

test(
  'an unreachable database is a transient failure: counted, retried with backoff, credentials never shown',
  async () => {
    await core.createNamespacedSecret({
      namespace: NS,
      body: {
        metadata: { name: 'down' },
        stringData: { DATABASE_URL: 'postgres://app:topsecret-pw@127.0.0.1:1/x' },
      },
    });
    await createPolicy('unreachable', {
      connection: { secretRef: { name: 'down' } },
      mode: 'plan',
      approval: 'manual',
      roles: [{ name: role('never'), login: false }],
    });
    const failing = await eventually(
      'two counted transient failures',
      async () => {
        const p = await readPolicy('unreachable');
        return (p.status?.transient_failure_count ?? 0) >= 2 ? p : undefined;
      },
      20_000,
    );
    expect(condition(failing, 'Ready')).toMatchObject({
      status: 'False',
      reason: 'DatabaseConnectionFailed',
    });
    expect(condition(failing, 'Degraded')).toMatchObject({ status: 'True' });
    expect(failing.status.last_error).toEqual(expect.any(String));
    expect(JSON.stringify(failing.status)).not.toContain('topsecret-pw');
    expect(cluster!.services.logged.join('')).not.toContain('topsecret-pw');
  },
  TIMEOUT_MS,
);
