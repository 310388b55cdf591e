// A term change of one planner replica (ADR 0011, ADR 0015): the planner loses its lease to another holder
// (as when its renewal came too late under load) and takes it again in the same process. The new term
// passes every policy once; converged policies are confirmed by their catalog fingerprint, as within a
// term, instead of being inspected in full again (the memo is kept across the replica's terms).
// Real servers: a private nats-server, the API emulator, gateway, inspector, executor and planner, a
// sandbox PostgreSQL database.
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { connect } from '@nats-io/transport-node';
import { kvLeaseStore, openLeaseBucket } from '@rolepolicy/contracts';
import { GROUP, KIND_NAMES, VERSION } from '@rolepolicy/kube';
import {
  createPostgresSandbox,
  eventually,
  sandboxId,
  startServiceCluster,
  type PostgresSandbox,
  type ServiceCluster,
} from '@rolepolicy/testing';
import pg from 'pg';
import { executorService } from '../../../executor/src/service.js';
import { inspectorService } from '../../../inspector/src/service.js';
import { k8sGatewayService } from '../../../k8s-gateway/src/service.js';
import { PLANNER_LEASE } from '../leadership/leader-publisher.js';
import { plannerService } from '../service.js';

const NS = 'planner-terms';
const POLICIES = 4;
const IDENTITY = 'terms-planner';
const LEASE_MS = 6_000;
const id = sandboxId();
const role = (i: number): string => `rp_pt_${id}_r${i}`;
const policyName = (i: number): string => `terms-${i}`;

let cluster: ServiceCluster | undefined;
let db: PostgresSandbox;
let custom: CustomObjectsApi;
let inspectorUrl: string;
const policies = {
  group: GROUP,
  version: VERSION,
  plural: KIND_NAMES.PostgresPolicy.plural,
  namespace: NS,
};

type Obj = { metadata: Record<string, any>; status?: any };

const readPolicy = async (name: string): Promise<Obj> =>
  (await custom.getNamespacedCustomObject({ ...policies, name })) as Obj;

const ready = (p: Obj): string | undefined =>
  (p.status?.conditions ?? []).find(
    (c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True',
  )?.reason;

/** The inspector's answers so far: full reads (inline or through the object store) and fingerprint-only. */
async function inspections(): Promise<{ full: number; unchanged: number }> {
  const text = await (await fetch(`${inspectorUrl}/metrics`)).text();
  // Labels in any order (the registry adds `service`).
  const count = (outcome: string): number =>
    text
      .split('\n')
      .filter((l) => l.startsWith('rp_inspect_requests_total{') && l.includes(`outcome="${outcome}"`))
      .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
  return { full: count('inline') + count('object'), unchanged: count('unchanged') };
}

/** Asks every policy to reconcile once more and waits until each handled it. */
async function reconcileAll(token: string): Promise<void> {
  for (let i = 0; i < POLICIES; i++) {
    await custom.patchNamespacedCustomObject(
      {
        ...policies,
        name: policyName(i),
        body: { metadata: { annotations: { 'rolepolicy.io/reconcile-requested-at': token } } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }
  for (let i = 0; i < POLICIES; i++) {
    await eventually(
      `${policyName(i)} handled reconcile ${token}`,
      async () => (await readPolicy(policyName(i))).status?.lastHandledReconcileAt === token,
      30_000,
    );
  }
}

beforeAll(async () => {
  cluster = await startServiceCluster(NS, k8sGatewayService, {
    logLevel: process.env['RP_TEST_VERBOSE'] ? 'log' : 'warn',
  });
  db = await createPostgresSandbox('planner_terms');
  custom = cluster.kubeConfig.makeApiClient(CustomObjectsApi);
  inspectorUrl = await cluster.services.start(inspectorService);
  await cluster.services.start(executorService);
  await cluster.services.start(plannerService, {
    PLANNER_IDENTITY: IDENTITY,
    PLANNER_LEASE_DURATION_MS: String(LEASE_MS),
    PLANNER_LEASE_RENEW_DEADLINE_MS: '4000',
    PLANNER_LEASE_RETRY_MS: '1000',
  });
  await cluster.kubeConfig.makeApiClient(CoreV1Api).createNamespacedSecret({
    namespace: NS,
    body: { metadata: { name: 'db' }, stringData: { DATABASE_URL: db.url } },
  });
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
  if (db !== undefined) {
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    for (let i = 0; i < POLICIES; i++) await admin.query(`DROP ROLE IF EXISTS "${role(i)}"`);
    await admin.end();
  }
  await db?.drop();
});

test('a new term of the same replica confirms converged policies by fingerprint, not by full inspections', async () => {
  for (let i = 0; i < POLICIES; i++) {
    await custom.createNamespacedCustomObject({
      ...policies,
      body: {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: 'PostgresPolicy',
        metadata: { name: policyName(i) },
        spec: {
          connection: { secretRef: { name: 'db' } },
          mode: 'apply',
          approval: 'auto',
          roles: [{ name: role(i), login: false }],
        },
      },
    });
  }
  for (let i = 0; i < POLICIES; i++) {
    await eventually(
      `${policyName(i)} Reconciled`,
      async () => ready(await readPolicy(policyName(i))) === 'Reconciled',
      60_000,
    );
  }
  // A full pass with the fingerprint records the convergence; the pass after it is fingerprint-only.
  await reconcileAll('full');
  const before = await inspections();
  await reconcileAll('memo');
  const inTerm = await inspections();
  expect(inTerm.full - before.full).toBe(0);
  expect(inTerm.unchanged - before.unchanged).toBeGreaterThanOrEqual(POLICIES);

  // Another holder takes the lease (what a standby does when the leader's renewal came late): the planner
  // stops leading at its next renewal, and takes the lease again once that holder let it expire.
  const client = await connect({ servers: cluster!.nats.url });
  try {
    const store = kvLeaseStore(await openLeaseBucket(client), PLANNER_LEASE);
    const lease = (await store.read())!;
    expect(lease.record.holder).toBe(IDENTITY);
    await store.update(
      { holder: 'another-replica', epoch: lease.record.epoch + 1, durationMs: LEASE_MS },
      lease.revision,
    );
    const retaken = await eventually(
      'the planner leading again in a later term',
      async () => {
        const now = await store.read();
        return now?.record.holder === IDENTITY && now.record.epoch > lease.record.epoch + 1 ? now : undefined;
      },
      4 * LEASE_MS,
    );
    expect(retaken.record.epoch).toBeGreaterThan(lease.record.epoch + 1);
  } finally {
    await client.close();
  }
  // The new term passes every policy once.
  const passed = await eventually(
    'every policy passed in the new term',
    async () => {
      const now = await inspections();
      return now.full + now.unchanged - (inTerm.full + inTerm.unchanged) >= POLICIES ? now : undefined;
    },
    30_000,
  );
  console.log(
    `after a term change: ${passed.full - inTerm.full} full inspections, ` +
      `${passed.unchanged - inTerm.unchanged} fingerprint-only, for ${POLICIES} converged policies`,
  );
  expect(passed.full - inTerm.full).toBe(0);
  expect(passed.unchanged - inTerm.unchanged).toBeGreaterThanOrEqual(POLICIES);
  for (let i = 0; i < POLICIES; i++) expect(ready(await readPolicy(policyName(i)))).toBe('Reconciled');
}, 240_000);
