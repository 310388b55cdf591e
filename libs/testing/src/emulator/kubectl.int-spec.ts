// kubectl (a client nobody here wrote) against the emulator: apply the project's CRDs and samples,
// read them with the CRDs' printer columns, patch status, watch, delete, and see admission rejections.
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { startEmulator, type Emulator } from './start.js';
import { eventually } from './test-support.js';

const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));
const crdDir = join(repoRoot, 'deploy/crds');
const samples = fileURLToPath(new URL('./testdata/samples.yaml', import.meta.url));
const invalidGrant = fileURLToPath(new URL('./testdata/invalid-grant.yaml', import.meta.url));
const unknownField = fileURLToPath(new URL('./testdata/unknown-field.yaml', import.meta.url));
const ssaPolicy = fileURLToPath(new URL('./testdata/ssa-policy.yaml', import.meta.url));
const KUBECTL = '/usr/bin/kubectl';

type Result = { readonly code: number; readonly stdout: string; readonly stderr: string };

let emu: Emulator;
let cacheDir: string;

function kubectl(...args: string[]): Promise<Result> {
  return new Promise((resolve) => {
    execFile(
      KUBECTL,
      [...args, '--cache-dir', cacheDir],
      { env: { ...process.env, KUBECONFIG: emu.kubeconfigPath } },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

async function ok(...args: string[]): Promise<string> {
  const result = await kubectl(...args);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${result.stderr}`);
  return result.stdout;
}

/** Printer column names (priority 0) of the PostgresPolicy CRD as shipped, upper-cased as kubectl prints them. */
async function policyColumns(): Promise<string[]> {
  const crd = parse(await readFile(join(crdDir, 'postgrespolicies.rolepolicy.io.yaml'), 'utf8'));
  const columns = crd.spec.versions[0].additionalPrinterColumns as { name: string; priority?: number }[];
  return ['NAME', ...columns.filter((c) => !c.priority).map((c) => c.name.toUpperCase())];
}

beforeAll(async () => {
  emu = await startEmulator();
  cacheDir = await mkdtemp(join(tmpdir(), 'rp-kubectl-cache-'));
  await ok('apply', '-f', crdDir);
  await ok('apply', '-f', samples);
});

afterAll(async () => {
  await emu.stop();
  await rm(cacheDir, { recursive: true, force: true });
});

test('kubectl apply installs the five CRDs and the sample resources; a second apply is unchanged', async () => {
  const crds = await ok('get', 'crd', '-o', 'name');
  expect(crds.trim().split('\n').sort()).toEqual([
    'customresourcedefinition.apiextensions.k8s.io/ephemeralaccesspolicies.rolepolicy.io',
    'customresourcedefinition.apiextensions.k8s.io/ephemeralaccessrequests.rolepolicy.io',
    'customresourcedefinition.apiextensions.k8s.io/postgrespolicies.rolepolicy.io',
    'customresourcedefinition.apiextensions.k8s.io/postgrespolicycandidates.rolepolicy.io',
    'customresourcedefinition.apiextensions.k8s.io/postgrespolicyplans.rolepolicy.io',
  ]);
  // A Secret written with stringData always re-applies as "configured" (the live object has none).
  const again = await ok('apply', '-f', samples);
  expect(again).toContain('postgrespolicy.rolepolicy.io/orders unchanged\n');
});

test('kubectl get prints the CRD printer columns with the API-server defaults filled in', async () => {
  const out = await ok('get', 'postgrespolicies', '-n', 'team-a');
  const [header, row] = out.trim().split('\n');
  expect(header!.split(/\s{2,}/)).toEqual(await policyColumns());
  expect(row).toMatch(/^orders\s+apply\s+manual\s+authoritative\s+false\s+\d+s$/);
});

test('kubectl patch --subresource=status changes status, shown by the Ready column', async () => {
  const patched = await ok(
    'patch',
    'postgrespolicy',
    'orders',
    '-n',
    'team-a',
    '--subresource=status',
    '--type=merge',
    '-p',
    '{"status":{"conditions":[{"type":"Ready","status":"True","reason":"Converged"}]}}',
  );
  expect(patched.trim()).toBe('postgrespolicy.rolepolicy.io/orders patched');
  const out = await ok('get', 'postgrespolicies', 'orders', '-n', 'team-a');
  expect(out.trim().split('\n')[1]).toMatch(
    /^orders\s+apply\s+manual\s+authoritative\s+True\s+false\s+\d+s$/,
  );
  const generation = await ok(
    'get',
    'postgrespolicy',
    'orders',
    '-n',
    'team-a',
    '-o',
    'jsonpath={.metadata.generation}',
  );
  expect(generation).toBe('1');
});

test('kubectl describe shows the Events recorded for the policy', async () => {
  const uid = await ok('get', 'postgrespolicy', 'orders', '-n', 'team-a', '-o', 'jsonpath={.metadata.uid}');
  await emu
    .kubeConfig()
    .makeApiClient(CoreV1Api)
    .createNamespacedEvent({
      namespace: 'team-a',
      body: {
        metadata: { name: 'orders.plan' },
        involvedObject: {
          apiVersion: 'rolepolicy.io/v1alpha1',
          kind: 'PostgresPolicy',
          name: 'orders',
          namespace: 'team-a',
          uid,
        },
        reason: 'PlanPending',
        message: 'plan orders-1 awaits approval',
        type: 'Normal',
        source: { component: 'rolepolicy-planner' },
        firstTimestamp: new Date(),
        lastTimestamp: new Date(),
        count: 1,
      },
    });
  const described = await ok('describe', 'postgrespolicy', 'orders', '-n', 'team-a');
  expect(described).toMatch(/Normal\s+PlanPending\s+.*rolepolicy-planner\s+plan orders-1 awaits approval/);
});

test('kubectl get -w streams the current rows and then each change', async () => {
  const child = spawn(KUBECTL, ['get', 'postgrespolicies', '-n', 'team-a', '-w', '--cache-dir', cacheDir], {
    env: { ...process.env, KUBECONFIG: emu.kubeconfigPath },
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  try {
    await eventually('the initial row', () => /\norders\s+apply\s+manual/.test(output));
    await ok(
      'patch',
      'postgrespolicy',
      'orders',
      '-n',
      'team-a',
      '--type=merge',
      '-p',
      '{"spec":{"suspend":true}}',
    );
    await eventually('the updated row', () =>
      /\norders\s+apply\s+manual\s+authoritative\s+True\s+true/.test(output),
    );
  } finally {
    child.kill();
  }
  expect(
    output
      .trim()
      .split('\n')[0]!
      .split(/\s{2,}/),
  ).toEqual(await policyColumns());
});

test('kubectl explain describes the CRD fields from the served OpenAPI schema', async () => {
  const out = await ok('explain', 'postgrespolicy.spec.connection');
  expect(out).toContain('KIND:       PostgresPolicy');
  expect(out).toMatch(/secretRef\t<Object>/);
  expect(out).toMatch(/params\t<Object>/);
  const request = await ok('explain', 'ephemeralaccessrequest.spec.requestedBy');
  expect(request).toContain('FIELD: requestedBy <Object>');
});

test('kubectl apply --server-side creates and updates custom resources through admission', async () => {
  const created = await ok('apply', '--server-side', '-f', ssaPolicy);
  expect(created).toContain('serverside-applied');
  const stored = await ok('get', 'postgrespolicy', 'ssa', '-n', 'team-a', '-o', 'jsonpath={.spec.mode}');
  expect(stored).toBe('apply');
  const again = await ok('apply', '--server-side', '-f', ssaPolicy);
  expect(again).toContain('postgrespolicy.rolepolicy.io/ssa serverside-applied');
  const rejected = await kubectl('apply', '--server-side', '-f', invalidGrant);
  expect(rejected.code).not.toBe(0);
  expect(rejected.stderr).toContain('database grant targets must set name');
  await ok('delete', 'postgrespolicy', 'ssa', '-n', 'team-a');
});

test('kubectl apply of a database grant without name is rejected with the spec message', async () => {
  const result = await kubectl('apply', '-f', invalidGrant);
  expect(result.code).not.toBe(0);
  expect(result.stderr).toContain(
    'The PostgresPolicy "broken" is invalid: spec.grants[0].object: Invalid value: "object": database grant targets must set name',
  );
  const get = await kubectl('get', 'postgrespolicy', 'broken', '-n', 'team-a');
  expect(get.stderr).toContain('postgrespolicies.rolepolicy.io "broken" not found');
});

test('kubectl apply of a misspelt field fails strict field validation; --validate=false prunes it', async () => {
  const strict = await kubectl('apply', '-f', unknownField);
  expect(strict.code).not.toBe(0);
  expect(strict.stderr).toContain('strict decoding error: unknown field "spec.aproval"');
  await ok('apply', '--validate=false', '-f', unknownField);
  const stored = await ok('get', 'postgrespolicy', 'typo', '-n', 'team-a', '-o', 'jsonpath={.spec}');
  expect(stored).not.toContain('aproval');
});

test('kubectl delete removes the policy', async () => {
  await ok('delete', 'postgrespolicy', 'typo', '-n', 'team-a');
  const deleted = await ok('delete', 'postgrespolicy', 'orders', '-n', 'team-a');
  expect(deleted.trim()).toBe('postgrespolicy.rolepolicy.io "orders" deleted');
  const after = await kubectl('get', 'postgrespolicies', '-n', 'team-a');
  expect(after.stderr.trim()).toBe('No resources found in team-a namespace.');
});
