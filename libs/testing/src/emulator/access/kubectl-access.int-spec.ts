// The real /usr/bin/kubectl with two identities against an emulator with authentication on: bob through
// a token kubeconfig of his own, alice through the admin kubeconfig's `--as=alice`. What they see is what
// a person would: `auth whoami`, `auth can-i`, RBAC's 403 and a ValidatingAdmissionPolicy's denial as
// kubectl prints them.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { kubectlFor, type Kubectl } from '../kubectl-runner.js';
import { startEmulator, type Emulator } from '../start.js';

const testdata = fileURLToPath(new URL('../testdata', import.meta.url));

let emu: Emulator;
let cacheDir: string;
let admin: Kubectl;
let bob: Kubectl;

const status = (decidedBy: string) => JSON.stringify({ status: { decision: 'Approved', decidedBy } });

beforeAll(async () => {
  emu = await startEmulator({ crdDir: testdata, authentication: {} });
  cacheDir = await mkdtemp(join(tmpdir(), 'rp-kubectl-cache-'));
  admin = kubectlFor(emu.kubeconfigPath, cacheDir);
  bob = kubectlFor(await emu.kubeconfigFor('bob', 'team-a'), cacheDir);
  await admin.ok('create', 'namespace', 'team-a');
  await admin.ok('apply', '-f', join(testdata, 'widget-approvals.yaml'));
  await admin.ok('create', '-n', 'team-a', '-f', join(testdata, 'widget-w1.yaml'));
});

afterAll(async () => {
  await emu.stop();
  await rm(cacheDir, { recursive: true, force: true });
});

test('auth whoami names each identity', async () => {
  expect(await bob.ok('auth', 'whoami')).toMatch(/Username\s+bob\n.*Groups\s+\[system:authenticated\]/s);
  expect(await admin.ok('auth', 'whoami', '--as=alice', '--as-group=approvers')).toMatch(
    /Username\s+alice\n.*Groups\s+\[approvers system:authenticated\]/s,
  );
  expect(await admin.ok('auth', 'whoami')).toMatch(/Username\s+kubernetes-admin/);
});

test('auth can-i follows the RoleBindings, custom verbs included', async () => {
  expect((await admin.run('auth', 'can-i', 'approve', 'widgets', '-n', 'team-a', '--as=alice')).stdout).toBe(
    'yes\n',
  );
  const no = await bob.run('auth', 'can-i', 'approve', 'widgets');
  expect([no.code, no.stdout]).toEqual([1, 'no\n']);
  expect(await bob.ok('auth', 'can-i', 'patch', 'widgets', '--subresource=status')).toBe('yes\n');
  // kubectl's imperative RBAC commands (sent in protobuf) grant carol the same.
  expect(
    await admin.ok(
      'create',
      'rolebinding',
      'carol',
      '--clusterrole=widget-writer',
      '--user=carol',
      '-n',
      'team-a',
    ),
  ).toBe('rolebinding.rbac.authorization.k8s.io/carol created\n');
  expect(await admin.ok('auth', 'can-i', 'patch', 'widgets', '-n', 'team-a', '--as=carol')).toBe('yes\n');
});

test('RBAC refusals read as kubectl prints a cluster’s 403', async () => {
  const list = await bob.run('get', 'secrets');
  expect(list.code).toBe(1);
  expect(list.stderr).toContain(
    'Error from server (Forbidden): secrets is forbidden: User "bob" cannot list resource "secrets" in API group "" in the namespace "team-a"',
  );
  const elsewhere = await admin.run('get', 'widgets', '-n', 'team-b', '--as=alice');
  expect(elsewhere.stderr).toContain(
    'Error from server (Forbidden): widgets.emulator.test is forbidden: User "alice" cannot list resource "widgets" in API group "emulator.test" in the namespace "team-b"',
  );
  const impersonate = await bob.run('get', 'widgets', '--as=alice');
  expect(impersonate.stderr).toContain(
    'Error from server (Forbidden): users "alice" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope',
  );
});

test('a ValidatingAdmissionPolicy denial reads as kubectl prints it, and the approver passes', async () => {
  const patch = (k: Kubectl, decidedBy: string, ...as: string[]) =>
    k.run(
      'patch',
      'widget',
      'w1',
      '-n',
      'team-a',
      '--subresource=status',
      '--type=merge',
      '-p',
      status(decidedBy),
      ...as,
    );
  const forbidden = await patch(bob, 'bob');
  expect(forbidden.code).toBe(1);
  expect(forbidden.stderr.trim()).toBe(
    `Error from server (Forbidden): widgets.emulator.test "w1" is forbidden: ValidatingAdmissionPolicy 'widget-decisions' with binding 'widget-decisions' denied request: user bob may not approve widgets`,
  );
  const forged = await patch(admin, 'carol', '--as=alice');
  expect(forged.stderr.trim()).toBe(
    `The widgets "w1" is invalid: : ValidatingAdmissionPolicy 'widget-decisions' with binding 'widget-decisions' denied request: decidedBy must be the caller`,
  );
  expect((await patch(admin, 'alice', '--as=alice')).code).toBe(0);
  expect(await admin.ok('get', 'widget', 'w1', '-n', 'team-a', '-o', 'jsonpath={.status.decidedBy}')).toBe(
    'alice',
  );
});

test('a Warn binding admits the write and kubectl prints the warning', async () => {
  await admin.ok('apply', '-f', join(testdata, 'widget-size-warning.yaml'));
  const patched = await bob.run('patch', 'widget', 'w1', '--type=merge', '-p', '{"spec":{"size":12}}');
  expect(patched.code).toBe(0);
  expect(patched.stderr).toContain(
    "Warning: Validation failed for ValidatingAdmissionPolicy 'widget-size' with binding 'widget-size-warn': widgets above size 10 are deprecated, got 12",
  );
});
