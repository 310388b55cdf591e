// The plugin's decisions against the API emulator alone (no services): a write racing ours is read again
// and re-checked, never overwritten; someone else's decision in between is a refusal; the API's own
// refusal (forbidden) is quoted; --as names the decider; bad flags are usage errors (exit 2).
import { fileURLToPath } from 'node:url';

import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import {
  admit,
  GROUP,
  VERSION,
  type CustomResourceDefinition,
  type PostgresPolicyPlan,
} from '@rolepolicy/kube';
import { startEmulator, type Emulator } from '@rolepolicy/testing';

import { runCli } from '../test-support/run-cli.js';

const CRD_DIR = fileURLToPath(new URL('../../../../deploy/crds', import.meta.url));
const NS = 'plugin';
const SLOW = 30_000;
const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const plans = { group: GROUP, version: VERSION, plural: 'postgrespolicyplans', namespace: NS };

let emulator: Emulator;
let custom: CustomObjectsApi;

async function createPlan(name: string): Promise<void> {
  await custom.createNamespacedCustomObject({
    ...plans,
    body: {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'PostgresPolicyPlan',
      metadata: { name },
      spec: {
        managedDatabaseIdentity: 'db',
        policyGeneration: 1,
        policyRef: { name: 'shop' },
        reconciliationMode: 'authoritative',
      },
    },
  });
  await patchStatus(name, {
    phase: 'Pending',
    changeDigest: `sha256:${'c'.repeat(64)}`,
    changeSummary: { roles_created: 1, total: 1 },
    sqlStatements: 1,
    conditions: [
      { type: 'Computed', status: 'True', reason: 'PlanComputed' },
      { type: 'Approved', status: 'False', reason: 'PendingApproval' },
    ],
  });
}

function patchStatus(name: string, status: Record<string, unknown>): Promise<unknown> {
  return custom.patchNamespacedCustomObjectStatus({ ...plans, name, body: { status } }, MERGE);
}

async function readPlan(name: string): Promise<PostgresPolicyPlan> {
  return (await custom.getNamespacedCustomObject({ ...plans, name })) as PostgresPolicyPlan;
}

/** Runs `rolepolicy <args> -n plugin` against the emulator's kubeconfig. */
function plugin(...args: string[]) {
  return runCli([...args, '-n', NS], { env: { KUBECONFIG: emulator.kubeconfigPath } });
}

/** Makes `write` land once, just before the plugin's first status write of `name`. */
function beforeStatusWrite(name: string, write: () => Promise<unknown>): void {
  let armed = true;
  emulator.setRequestHook(async ({ method, path }) => {
    if (armed && method === 'PATCH' && path.endsWith(`/postgrespolicyplans/${name}/status`)) {
      armed = false;
      await write();
    }
  });
}

beforeAll(async () => {
  emulator = await startEmulator({ crdDir: CRD_DIR });
  custom = emulator.kubeConfig(NS).makeApiClient(CustomObjectsApi);
}, SLOW);

afterEach(() => {
  emulator.setRequestHook(undefined);
});

afterAll(async () => {
  await emulator?.stop();
});

it(
  'a status write racing the approval (409) is read again: the approval lands and keeps it',
  async () => {
    await createPlan('raced');
    beforeStatusWrite('raced', () => patchStatus('raced', { revalidatedAt: '2026-11-27T12:00:00Z' }));
    const run = await plugin('approve', 'raced', '-m', 'CHG-1');
    expect(run.stderr).toContain('changed while deciding');
    expect(run.code).toBe(0);
    const plan = await readPlan('raced');
    expect(plan.status?.revalidatedAt).toBe('2026-11-27T12:00:00Z');
    expect(plan.status?.conditions).toEqual([
      expect.objectContaining({ type: 'Computed', status: 'True' }),
      expect.objectContaining({ type: 'Approved', status: 'True', message: 'CHG-1' }),
    ]);
    expect(plan.status?.decidedBy?.username).toBe('emulator');
  },
  SLOW,
);

it(
  "someone else's decision in between is a refusal (exit 3), never overwritten",
  async () => {
    await createPlan('contested');
    beforeStatusWrite('contested', () =>
      patchStatus('contested', {
        conditions: [{ type: 'Denied', status: 'True', reason: 'DeniedByUser' }],
        decidedBy: { username: 'carol@example.com' },
      }),
    );
    const run = await plugin('approve', 'contested');
    expect(run.code).toBe(3);
    expect(run.stderr).toContain(
      `postgrespolicyplan "${NS}/contested": cannot be approved: status.conditions: the plan is already Denied (decidedBy carol@example.com); plan decisions are terminal`,
    );
    expect((await readPlan('contested')).status?.decidedBy?.username).toBe('carol@example.com');
  },
  SLOW,
);

it(
  "a forbidden write quotes the API's message and exits 3",
  async () => {
    await createPlan('guarded');
    const forbidden = `postgrespolicyplans.rolepolicy.io "guarded" is forbidden: User "emulator" cannot patch resource "postgrespolicyplans/status"`;
    emulator.setAdmission((request) => {
      if (request.subresource === 'status' && request.object.metadata.name === 'guarded') {
        return {
          allowed: false,
          status: {
            kind: 'Status',
            apiVersion: 'v1',
            metadata: {},
            status: 'Failure',
            message: forbidden,
            reason: 'Forbidden',
            code: 403,
          },
        };
      }
      const crd = request.resource.crd as unknown as CustomResourceDefinition | undefined;
      if (!crd) return { allowed: true };
      const result = admit({
        crd,
        operation: request.operation,
        object: request.object,
        oldObject: request.oldObject,
        ...(request.subresource === 'status' ? { subresource: 'status' as const } : {}),
      });
      return result.allowed
        ? { allowed: true, object: result.object as never }
        : { allowed: false, status: result.status as never };
    });
    try {
      const run = await plugin('deny', 'guarded');
      expect(run.code).toBe(3);
      expect(run.stderr).toContain(`postgrespolicyplan "${NS}/guarded": forbidden: ${forbidden}`);
    } finally {
      emulator.setAdmission(undefined);
    }
  },
  SLOW,
);

it(
  '--as names the decider when the API cannot say who the caller is, and says so',
  async () => {
    await createPlan('impersonated');
    const run = await plugin('approve', 'impersonated', '--as', 'dave@example.com', '-o', 'name');
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`postgrespolicyplan.rolepolicy.io/impersonated\n`);
    expect(run.stderr).toContain('using --as "dave@example.com", which the API has not verified');
    expect((await readPlan('impersonated')).status?.decidedBy?.username).toBe('dave@example.com');
  },
  SLOW,
);

it(
  'lists plans across namespaces as a List, and refuses bad flags with exit 2',
  async () => {
    await createPlan('listed');
    const listed = await runCli(['plans', '-A', '-o', 'json'], {
      env: { KUBECONFIG: emulator.kubeconfigPath },
    });
    expect(listed.code).toBe(0);
    const list = JSON.parse(listed.stdout) as { kind: string; items: { metadata: { name: string } }[] };
    expect(list.kind).toBe('List');
    expect(list.items.map((i) => i.metadata.name)).toContain('listed');

    const context = await plugin('plans', '--context', 'nope');
    expect(context.code).toBe(2);
    expect(context.stderr).toContain('--context: the kubeconfig has no context "nope"');
    const output = await plugin('plans', '-o', 'xml');
    expect(output.code).toBe(2);
    const missing = await plugin('approve');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("missing required argument 'plan'");
  },
  SLOW,
);
