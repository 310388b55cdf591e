// The review artifact of one namespace's plan must not disclose another namespace's roles (ADR 0028): two
// policies of two namespaces on one PostgreSQL server, the executor a superuser (as the fleet connects);
// tenant A reads its plan's review ConfigMap with kubectl, as anyone who can read A's ConfigMaps can.
import { gunzipSync } from 'node:zlib';

import { Kubectl } from './support/kubectl.js';
import { applyPolicy, PGPLAN, waitPlanRef, waitReady } from './support/peer.js';
import { startStack, waitFor, type Stack, type TargetDatabase } from './stack.js';

const TENANT_A = 'tenant-alpha';
const TENANT_B = 'tenant-bravo';

let stack: Stack;
let dbB: TargetDatabase;
let a: Kubectl;
let b: Kubectl;

beforeAll(async () => {
  stack = await startStack({ namespace: TENANT_A });
  await stack.createDatabase('alpha', 'alpha-db');
  dbB = await stack.createDatabase('bravo', 'bravo-db');
  a = new Kubectl(() => stack.emulator.kubeconfigPath, TENANT_A);
  b = new Kubectl(() => stack.emulator.kubeconfigPath, TENANT_B);
}, 45_000);

afterAll(async () => {
  a?.dispose();
  b?.dispose();
  await stack?.stop();
});

/** The review artifact of `plan` as tenant A reads it: the plan's annotation, then the ConfigMap it names. */
async function reviewTextAsA(plan: string): Promise<string> {
  const cm = await waitFor(
    `${plan}: the review ConfigMap`,
    async () => {
      const name = await a.jsonpath(
        PGPLAN,
        plan,
        "{.metadata.annotations['rolepolicy\\.io/review-configmap']}",
      );
      if (name === '') return undefined;
      const got = await a.run(['get', 'configmap', name, '-o', 'json']);
      return got.code === 0 ? got.stdout : undefined;
    },
    { timeoutMs: 30_000 },
  );
  const configMap = JSON.parse(cm) as {
    data?: Record<string, string>;
    binaryData?: Record<string, string>;
  };
  return (
    configMap.data?.['review.json'] ??
    gunzipSync(Buffer.from(configMap.binaryData?.['review.json.gz'] ?? '', 'base64')).toString('utf8')
  );
}

test("tenant A's review artifact names none of tenant B's roles on the same server (superuser executor)", async () => {
  const bravo = [stack.role('bravo_secret_group'), stack.role('bravo_secret_app')];
  await b.upsertSecret('bravo-db', { DATABASE_URL: dbB.url });
  await applyPolicy(b, 'bravo-policy', {
    connection: { secretRef: { name: 'bravo-db' } },
    interval: '5m',
    approval: 'auto',
    roles: [{ name: bravo[0] }, { name: bravo[1], login: true }],
    memberships: [{ role: bravo[0], members: [{ name: bravo[1] }] }],
  });
  await waitReady(b, 'bravo-policy', 'True', 'Reconciled', 60_000);
  const edges = await dbB.sql(
    `SELECT 1 FROM pg_auth_members am JOIN pg_roles g ON g.oid = am.roleid WHERE g.rolname = $1`,
    [bravo[0]],
  );
  expect(edges).toHaveLength(1);

  const alpha = [stack.role('alpha_group'), stack.role('alpha_app')];
  await applyPolicy(a, 'alpha-policy', {
    connection: { secretRef: { name: 'alpha-db' } },
    interval: '5m',
    approval: 'manual',
    roles: [{ name: alpha[0] }, { name: alpha[1], login: true }],
    memberships: [{ role: alpha[0], members: [{ name: alpha[1] }] }],
  });
  const plan = await waitPlanRef(a, 'alpha-policy', 60_000);
  const text = await reviewTextAsA(plan);
  const artifact = JSON.parse(text) as {
    context: { inspector: { superuser: boolean | null }; authority_graph_complete: boolean };
    recorded: { visual: { nodes: { label: string }[] } };
  };
  // The executor is a superuser and its facts were read: the case where the whole server used to leak.
  expect(artifact.context.inspector.superuser).toBe(true);
  expect(artifact.context.authority_graph_complete).toBe(true);
  const labels = artifact.recorded.visual.nodes.map((n) => n.label);
  expect(labels).toEqual(expect.arrayContaining(alpha));
  // Neither B's roles nor any other role of the server (other test files' leftovers included) is drawn.
  expect(labels.filter((label) => !alpha.includes(label))).toEqual([]);
  expect(bravo.filter((name) => text.includes(name))).toEqual([]);
}, 150_000);
