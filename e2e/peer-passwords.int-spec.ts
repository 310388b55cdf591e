// The peer operator's password scenarios, in our API and driven with kubectl: a Secret-sourced password
// with an expiry, rotated, never printed by any service (every service logs at verbose here); a generated
// password kept across reconciles, regenerated after its Secret is deleted and collected with its policy;
// a password Secret that does not exist yet, and one whose value is empty, both recovering once fixed.
import { generatedSecretName } from '@rolepolicy/kube';
import { Kubectl } from './support/kubectl.js';
import { applyPolicy, PGR, waitEvent, waitLastError, waitReady } from './support/peer.js';
import { startStack, waitFor, type Stack, type TargetDatabase } from './stack.js';

let stack: Stack;
let db: TargetDatabase;
let k: Kubectl;
const logs: string[] = [];
const restore: (() => void)[] = [];

/** Keeps what the in-process services print (and keeps it off the test output). */
function captureOutput(stream: NodeJS.WriteStream): void {
  const original = stream.write.bind(stream);
  stream.write = ((chunk: string | Uint8Array) => {
    logs.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return true;
  }) as typeof stream.write;
  restore.push(() => (stream.write = original));
}

beforeAll(async () => {
  captureOutput(process.stdout);
  captureOutput(process.stderr);
  stack = await startStack({ env: { LOG_LEVEL: 'verbose' } });
  db = await stack.createDatabase('peer_pw', 'postgres-credentials');
  k = new Kubectl(() => stack.emulator.kubeconfigPath, stack.namespace);
}, 45_000);

afterAll(async () => {
  k?.dispose();
  await stack?.stop();
  for (const undo of restore) undo();
});

const connection = { secretRef: { name: 'postgres-credentials' } };

async function passwordHash(role: string): Promise<string | null> {
  const rows = await db.sql<{ rolpassword: string | null }>(
    'SELECT rolpassword FROM pg_authid WHERE rolname = $1',
    [role],
  );
  return rows[0]?.rolpassword ?? null;
}

async function waitHashChange(role: string, previous: string | null): Promise<string> {
  return waitFor(
    `${role}: a new password hash`,
    async () => {
      const hash = await passwordHash(role);
      return hash !== null && hash !== previous ? hash : undefined;
    },
    { timeoutMs: 45_000 },
  );
}

test('a Secret-sourced password with an expiry is set, rotated, and never printed', async () => {
  const user = stack.role('password-user');
  const initial = 'e2e_initial_pw!';
  const rotated = 'e2e_rotated_pw!';
  await k.upsertSecret('role-passwords', { [user]: initial });
  await applyPolicy(k, 'password-policy', {
    connection,
    interval: '15s',
    approval: 'auto',
    roles: [
      {
        name: user,
        login: true,
        password: { secretRef: { name: 'role-passwords' }, secretKey: user },
        password_valid_until: '2099-12-31T00:00:00Z',
      },
    ],
  });
  await waitReady(k, 'password-policy', 'True');
  const first = await passwordHash(user);
  expect(first).toMatch(/^SCRAM-SHA-256\$/);
  const [until] = await db.sql<{ year: number }>(
    "SELECT extract(year FROM rolvaliduntil AT TIME ZONE 'UTC')::int AS year FROM pg_authid WHERE rolname = $1",
    [user],
  );
  expect(until?.year).toBe(2099);

  await k.upsertSecret('role-passwords', { [user]: rotated });
  await waitHashChange(user, first);
  await waitReady(k, 'password-policy', 'True');

  const printed = logs.join('');
  expect(printed).toContain('password-policy'); // the services did log about this policy
  expect(printed).not.toContain(initial);
  expect(printed).not.toContain(rotated);
}, 120_000);

test('a generated password: kept across reconciles, regenerated when its Secret is deleted, collected with the policy', async () => {
  const user = stack.role('genuser');
  const secret = generatedSecretName('generated-password-policy', user);
  await applyPolicy(k, 'generated-password-policy', {
    connection,
    approval: 'auto',
    interval: '15s',
    roles: [
      {
        name: user,
        login: true,
        password: { generate: { length: 32 } },
        password_valid_until: '2099-12-31T00:00:00Z',
      },
    ],
  });
  await waitReady(k, 'generated-password-policy', 'True');
  const keys = async () => Object.keys(JSON.parse((await k.jsonpath('secret', secret, '{.data}')) || '{}'));
  expect((await keys()).sort()).toEqual(['password', 'verifier']);
  const first = await passwordHash(user);
  expect(first).toMatch(/^SCRAM-SHA-256\$/);

  // A forced reconcile converges without touching the password.
  const value = await stack.resources.requestReconcile('generated-password-policy');
  await waitFor('the forced reconcile handled', async () =>
    (await k.jsonpath(PGR, 'generated-password-policy', '{.status.lastHandledReconcileAt}')) === value
      ? true
      : undefined,
  );
  expect(await passwordHash(user)).toBe(first);

  await k.ok(['delete', 'secret', secret, '--wait=true']);
  await waitFor('the generated Secret back', async () => ((await keys()).length === 2 ? true : undefined), {
    timeoutMs: 45_000,
  });
  await waitReady(k, 'generated-password-policy', 'True');
  await waitHashChange(user, first);

  await k.ok(['delete', PGR, 'generated-password-policy', '--wait=true']);
  await k.ok(['wait', '--for=delete', `secret/${secret}`, '--timeout=30s']);
  expect((await k.run(['get', 'secret', secret])).stderr).toContain('NotFound');
}, 120_000);

test('a password Secret that does not exist yet is SecretFetchFailed; creating it converges', async () => {
  const user = stack.role('missing-pw-user');
  await applyPolicy(k, 'missing-password-secret-policy', {
    connection,
    interval: '15s',
    roles: [
      {
        name: user,
        login: true,
        password: { secretRef: { name: 'nonexistent-password-secret' }, secretKey: user },
      },
    ],
  });
  await waitReady(k, 'missing-password-secret-policy', 'False', 'SecretFetchFailed');
  await k.upsertSecret('nonexistent-password-secret', { [user]: 'fixed_pw!' });
  await waitReady(k, 'missing-password-secret-policy', 'True');
  await waitEvent(k, 'missing-password-secret-policy', 'Recovered');
  expect(await passwordHash(user)).toMatch(/^SCRAM-SHA-256\$/);
}, 120_000);

test('an empty password value is InvalidSpec saying "password is empty"; filling it converges', async () => {
  const user = stack.role('empty-pw-user');
  await k.upsertSecret('empty-password-secret', { [user]: '' });
  await applyPolicy(k, 'empty-password-secret-policy', {
    connection,
    interval: '15s',
    roles: [
      {
        name: user,
        login: true,
        password: { secretRef: { name: 'empty-password-secret' }, secretKey: user },
      },
    ],
  });
  await waitReady(k, 'empty-password-secret-policy', 'False', 'InvalidSpec');
  await waitLastError(k, 'empty-password-secret-policy', 'password is empty');
  await k.upsertSecret('empty-password-secret', { [user]: 'now_has_password!' });
  await waitReady(k, 'empty-password-secret-policy', 'True');
  await waitEvent(k, 'empty-password-secret-policy', 'Recovered');
  expect(await passwordHash(user)).toMatch(/^SCRAM-SHA-256\$/);
}, 120_000);
