// End to end, informer semantics across restarts (ADR 0005): the stack restarted against a new, empty API
// and the same NATS neither acts on nor writes for the old API's objects, and a policy recreated with a generated
// password gets a new Secret that sets the role's password; with the gateway away, a policy and a
// generated Secret deleted with kubectl are forgotten and regenerated as soon as the gateway lists again.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { ResourceCache } from '@rolepolicy/contracts';
import { generatedSecretName } from '@rolepolicy/kube';
import { scramSha256Verifier } from '@rolepolicy/policy';
import { sleep, startStack, waitFor, type Stack, type TargetDatabase } from './stack.js';

const KUBECTL = '/usr/bin/kubectl';

let stack: Stack;
let db: TargetDatabase;
let cacheDir: string;

beforeAll(async () => {
  stack = await startStack();
  db = await stack.createDatabase('restart');
  cacheDir = await mkdtemp(join(tmpdir(), 'rp-kubectl-cache-'));
}, 45_000);

afterAll(async () => {
  await stack?.stop();
  await rm(cacheDir, { recursive: true, force: true });
});

/** Runs the real kubectl against the stack's current API. */
function kubectl(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      KUBECTL,
      [...args, '--cache-dir', cacheDir],
      { env: { ...process.env, KUBECONFIG: stack.emulator.kubeconfigPath } },
      (error, stdout, stderr) =>
        error ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr}`)) : resolve(stdout),
    );
  });
}

/** True when the role's stored SCRAM verifier was computed from `password`. */
async function passwordMatches(role: string, password: string): Promise<boolean> {
  const [row] = await db.sql<{ rolpassword: string | null }>(
    'SELECT rolpassword FROM pg_authid WHERE rolname = $1',
    [role],
  );
  const match = /^SCRAM-SHA-256\$(\d+):([^$]+)\$/.exec(row?.rolpassword ?? '');
  if (!match) return false;
  return (
    scramSha256Verifier(password, Buffer.from(match[2]!, 'base64'), Number(match[1])) === row?.rolpassword
  );
}

async function readSecret(name: string): Promise<{ uid: string; password: string } | undefined> {
  const secret = await stack.core
    .readNamespacedSecret({ namespace: stack.namespace, name })
    .catch(() => undefined);
  if (secret === undefined) return undefined;
  const password = Buffer.from(secret.data?.['password'] ?? '', 'base64').toString('utf8');
  return { uid: secret.metadata?.uid ?? '', password };
}

/** The policy's generated Secret once the role's password is the one it holds. */
async function generatedPasswordApplied(policy: string, role: string) {
  const name = generatedSecretName(policy, role);
  return waitFor(
    `${policy}: Ready=True and the role's password from ${name}`,
    async () => {
      const secret = await readSecret(name);
      const p = await stack.resources.policy(policy);
      const ready = p?.status?.conditions?.find((c) => c.type === 'Ready');
      if (secret === undefined || ready?.status !== 'True' || ready.reason !== 'Reconciled') return undefined;
      return (await passwordMatches(role, secret.password)) ? { ...secret, policy: p! } : undefined;
    },
    { timeoutMs: 45_000, describe: () => stack.resources.policy(policy).then((p) => p?.status) },
  );
}

/** Records the commands for the gateway (`rp.k8s.cmd.>`) whose target names `name`, from now on. */
async function commandsNaming(name: string): Promise<{ seen: string[]; stop: () => Promise<void> }> {
  const nc = await connect({ servers: stack.nats.url });
  const seen: string[] = [];
  nc.subscribe('rp.k8s.cmd.>', {
    callback: (_err, msg) => {
      const command = msg.json<{ command: string; target: { name: string } }>();
      if (command.target.name === name) seen.push(command.command);
    },
  });
  await nc.flush();
  return { seen, stop: () => nc.close() };
}

/** Policy names a consumer following RP_RESOURCES sees once it is current (what the planner starts from). */
async function policiesOnTheStream(): Promise<string[]> {
  const nc = await connect({ servers: stack.nats.url });
  const cache = await ResourceCache.start(nc, { kinds: ['postgrespolicy'] });
  try {
    await cache.ready;
    return cache
      .list('postgrespolicy', stack.namespace)
      .map((o) => o.metadata.name)
      .sort();
  } finally {
    await cache.stop();
    await nc.close();
  }
}

const spec = (role: string, password?: boolean) => ({
  connection: db.connection,
  mode: 'apply' as const,
  approval: 'auto' as const,
  roles: [{ name: role, login: true, ...(password ? { password: { generate: {} } } : {}) }],
});

/** Records every request to the current API whose path names `name`. */
function requestsNaming(name: string): string[] {
  const seen: string[] = [];
  stack.emulator.setRequestHook(({ method, path }) => {
    if (path.split('/').includes(name)) seen.push(`${method} ${path}`);
  });
  return seen;
}

test('restarted against a new, empty API: nothing is written for the old objects; a recreated policy gets a new password', async () => {
  const ghostRole = stack.role('ghost');
  const appRole = stack.role('recreated');
  await stack.resources.createPolicy('ghost', spec(ghostRole));
  await stack.resources.createPolicy('recreated', spec(appRole, true));
  await stack.reconciled('ghost');
  const before = await generatedPasswordApplied('recreated', appRole);

  await stack.replaceApi();
  const ghostRequests = requestsNaming('ghost');
  const ghostCommands = await commandsNaming('ghost');
  await stack.startServices();
  await stack.waitReady();
  await stack.resources.createPolicy('recreated', spec(appRole, true));
  const after = await generatedPasswordApplied('recreated', appRole);

  expect(after.uid).not.toBe(before.uid);
  expect(after.password).not.toBe(before.password);
  expect(await passwordMatches(appRole, before.password)).toBe(false);
  const versions = after.policy.status?.applied_password_source_versions ?? {};
  const secret = await stack.core.readNamespacedSecret({
    namespace: stack.namespace,
    name: generatedSecretName('recreated', appRole),
  });
  expect(Object.values(versions).join(',')).toContain(secret.metadata?.resourceVersion ?? '?');
  // The planner had the old `ghost` from the stream until the gateway's markers; none of it reached the API.
  await sleep(2_000);
  expect(ghostRequests).toEqual([]);
  // Nor did the planner act on it: it asked the gateway for fresh markers before its first pass.
  await ghostCommands.stop();
  expect(ghostCommands.seen).toEqual([]);
  expect(await policiesOnTheStream()).toEqual(['recreated']);
  expect(await stack.resources.policy('ghost')).toBeUndefined();
  expect(await stack.resources.plans('ghost')).toEqual([]);
}, 150_000);

test('policy and generated Secret deleted with kubectl while the gateway is away: forgotten and regenerated on its return', async () => {
  const goneRole = stack.role('forgotten');
  const appRole = stack.role('regenerated');
  await stack.resources.createPolicy('forgotten', spec(goneRole));
  await stack.resources.createPolicy('regenerated', spec(appRole, true));
  await stack.reconciled('forgotten');
  const before = await generatedPasswordApplied('regenerated', appRole);

  await stack.stopServices(['k8s-gateway']);
  await kubectl('delete', 'postgrespolicy', 'forgotten', '-n', stack.namespace);
  await kubectl('delete', 'secret', generatedSecretName('regenerated', appRole), '-n', stack.namespace);
  const forgottenRequests = requestsNaming('forgotten');
  await stack.startServices(['k8s-gateway']);

  // Well within one resync period (5 minutes): the gateway's first LIST and its markers are enough.
  const after = await generatedPasswordApplied('regenerated', appRole);
  expect(after.uid).not.toBe(before.uid);
  expect(after.password).not.toBe(before.password);
  expect(await passwordMatches(appRole, before.password)).toBe(false);
  await sleep(2_000);
  expect(forgottenRequests).toEqual([]);
  // The gateway never saw the delete; its first LIST's marker is what drops the policy.
  expect(await policiesOnTheStream()).not.toContain('forgotten');
}, 150_000);
