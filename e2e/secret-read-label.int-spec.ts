// SECRET_READ_POLICY=labelled, end to end with kubectl (ADR 0018): a tenant who may create policies can no
// longer make the controller read a Secret of the namespace that its writer did not label
// `rolepolicy.io/readable: "true"`. The refusal names the Secret, the label and the rule, never a value;
// labelling the Secret lets the policy use it.
import { Kubectl } from './support/kubectl.js';
import { applyPolicy, PGR, waitLastError, waitReady } from './support/peer.js';
import { startStack, type Stack, type TargetDatabase } from './stack.js';

let stack: Stack;
let db: TargetDatabase;
let k: Kubectl;

beforeAll(async () => {
  stack = await startStack({ env: { SECRET_READ_POLICY: 'labelled' } });
  db = await stack.createDatabase('labelled');
  k = new Kubectl(() => stack.emulator.kubeconfigPath, stack.namespace);
}, 45_000);

afterAll(async () => {
  k?.dispose();
  await stack?.stop();
});

const RULE = 'rolepolicy.io/readable: "true"';

test('a policy naming an unlabelled Secret is SecretAccessRefused, naming the Secret, the label and the rule', async () => {
  const marker = 'rp-marker-unlabelled-9e1f.invalid';
  await k.upsertSecret('team-db', { host: marker });
  await applyPolicy(k, 'probe-unlabelled', {
    mode: 'observe',
    approval: 'manual',
    connection: { params: { hostSecret: { name: 'team-db', key: 'host' }, dbname: 'postgres' } },
  });
  await waitReady(k, 'probe-unlabelled', 'False', 'SecretAccessRefused');
  const error = await waitLastError(
    k,
    'probe-unlabelled',
    `Secret ${stack.namespace}/team-db is not labelled`,
  );
  expect(error).toContain(RULE);
  expect(error).toContain('SECRET_READ_POLICY=labelled');
  expect(await k.ok(['get', PGR, 'probe-unlabelled', '-o', 'json'])).not.toContain(marker);
}, 90_000);

test('labelling the connection Secret lets the policy read it and reconcile', async () => {
  const role = stack.role('labelled_app');
  await applyPolicy(k, 'labelled-policy', {
    mode: 'apply',
    approval: 'auto',
    connection: { secretRef: { name: db.secretName } },
    roles: [{ name: role }],
  });
  await waitReady(k, 'labelled-policy', 'False', 'SecretAccessRefused');
  await k.ok(['label', 'secret', db.secretName, 'rolepolicy.io/readable=true']);
  await waitReady(k, 'labelled-policy', 'True', undefined, 60_000);
  expect(await db.sql('SELECT 1 FROM pg_roles WHERE rolname = $1', [role])).toHaveLength(1);
}, 120_000);
