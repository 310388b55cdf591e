// deploy/: the base and both overlays render with the real `kubectl kustomize`; every object passes its
// kind's schema (built-in and third-party kinds through kubernetes-models; the CRDs through the API
// emulator, which installs them); the rendered base applies to the emulator with the real `kubectl apply`;
// the Deployments read only variables their service declares, on the probe paths the runtime serves.
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator, type Emulator } from '@rolepolicy/testing';
import { DEFAULT_HTTP_PORTS, type EnvSpec } from '@rolepolicy/runtime';
import { k8sGatewayEnvSpec } from '../../apps/k8s-gateway/src/config.js';
import { inspectorEnvSpec } from '../../apps/inspector/src/config.js';
import { plannerEnvSpec } from '../../apps/planner/src/config.js';
import { executorEnvSpec } from '../../apps/executor/src/config.js';
import { accessSchedulerEnvSpec } from '../../apps/access-scheduler/src/config.js';
import {
  KUBECTL,
  KUSTOMIZATIONS,
  REPO_ROOT,
  groupOf,
  render,
  run,
  validateAgainstSchema,
  type Manifest,
} from './render.js';

const SPECS: Readonly<Record<keyof typeof DEFAULT_HTTP_PORTS, EnvSpec>> = {
  'k8s-gateway': k8sGatewayEnvSpec,
  inspector: inspectorEnvSpec,
  planner: plannerEnvSpec,
  executor: executorEnvSpec,
  'access-scheduler': accessSchedulerEnvSpec,
};

// Variables an overlay may set before a service declares them (none now; the test then demands it).
const PENDING_VARIABLES: Readonly<Record<string, readonly string[]>> = {};

type Container = {
  readonly name: string;
  readonly env?: readonly { readonly name: string; readonly value?: string }[];
  readonly ports?: readonly { readonly name: string; readonly containerPort: number }[];
  readonly resources?: { readonly requests?: Record<string, string> };
  readonly livenessProbe?: { readonly httpGet?: { readonly path: string; readonly port: string } };
  readonly readinessProbe?: { readonly httpGet?: { readonly path: string; readonly port: string } };
};
type Deployment = Manifest & {
  readonly spec: {
    readonly replicas?: number;
    readonly template: {
      readonly spec: {
        readonly serviceAccountName: string;
        readonly automountServiceAccountToken?: boolean;
        readonly containers: readonly Container[];
      };
    };
  };
};

const rendered = new Map<string, Manifest[]>();

beforeAll(async () => {
  for (const dir of KUSTOMIZATIONS) rendered.set(dir, (await render(dir)).objects);
});

function objects(dir: string): Manifest[] {
  const list = rendered.get(dir);
  if (!list) throw new Error(`${dir} was not rendered`);
  return list;
}

function deployments(dir: string): Deployment[] {
  return objects(dir).filter((o): o is Deployment => o.kind === 'Deployment');
}

function container(dir: string, service: string): Container {
  const deployment = deployments(dir).find((d) => d.metadata.name === `rolepolicy-${service}`);
  const found = deployment?.spec.template.spec.containers.find((c) => c.name === service);
  if (!found) throw new Error(`${dir}: no container ${service}`);
  return found;
}

function envValue(c: Container, name: string): string | undefined {
  return c.env?.find((e) => e.name === name)?.value;
}

describe.each(KUSTOMIZATIONS)('%s', (dir) => {
  it('renders the five services, each with its ServiceAccount and Service, in one namespace', () => {
    const all = objects(dir);
    for (const service of Object.keys(SPECS)) {
      for (const kind of ['Deployment', 'Service', 'ServiceAccount']) {
        expect(
          all.filter((o) => o.kind === kind && o.metadata.name === `rolepolicy-${service}`),
        ).toHaveLength(1);
      }
    }
    const namespaced = all.filter((o) => o.metadata.namespace !== undefined);
    expect(new Set(namespaced.map((o) => o.metadata.namespace))).toEqual(new Set(['rolepolicy-system']));
    expect(all.filter((o) => o.kind === 'CustomResourceDefinition')).toHaveLength(5);
    expect(all.filter((o) => o.kind === 'PodDisruptionBudget').map((o) => o.metadata.name)).toEqual([
      'rolepolicy-executor',
    ]);
    expect(all.filter((o) => o.kind === 'ServiceMonitor')).toHaveLength(1);
  });

  it('passes the schema of every built-in and third-party kind', async () => {
    const checked = objects(dir).filter((o) => groupOf(o.apiVersion) !== 'rolepolicy.io');
    for (const object of checked) await validateAgainstSchema(object);
    expect(checked.length).toBe(objects(dir).length);
  });

  it('probes /healthz and /readyz on the port HTTP_PORT names, with resource requests', () => {
    for (const service of Object.keys(SPECS)) {
      const c = container(dir, service);
      const port = c.ports?.find((p) => p.name === 'http')?.containerPort;
      expect(envValue(c, 'HTTP_PORT')).toBe(String(port));
      expect(c.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'http' });
      expect(c.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'http' });
      expect(Object.keys(c.resources?.requests ?? {}).sort()).toEqual(['cpu', 'memory']);
    }
  });

  it('sets only variables the service declares, with values its configuration accepts', () => {
    for (const [service, spec] of Object.entries(SPECS)) {
      const pending = PENDING_VARIABLES[service] ?? [];
      for (const variable of container(dir, service).env ?? []) {
        if (pending.includes(variable.name)) continue;
        const declared = spec[variable.name];
        expect(`${service} ${variable.name} declared: ${declared !== undefined}`).toBe(
          `${service} ${variable.name} declared: true`,
        );
        if (variable.value !== undefined) expect(declared!.parse(variable.value)).toMatchObject({ ok: true });
      }
    }
    const config = objects(dir).find(
      (o) => o.kind === 'ConfigMap' && o.metadata.name === 'rolepolicy-config',
    );
    for (const [name, value] of Object.entries((config?.['data'] ?? {}) as Record<string, string>)) {
      for (const spec of Object.values(SPECS)) expect(spec[name]?.parse(value)).toMatchObject({ ok: true });
    }
  });

  it('mounts an API token only into the k8s-gateway', () => {
    for (const d of deployments(dir)) {
      const gateway = d.metadata.name === 'rolepolicy-k8s-gateway';
      expect([d.metadata.name, d.spec.template.spec.automountServiceAccountToken]).toEqual([
        d.metadata.name,
        gateway,
      ]);
    }
    for (const sa of objects(dir).filter((o) => o.kind === 'ServiceAccount')) {
      expect([sa.metadata.name, sa['automountServiceAccountToken']]).toEqual([
        sa.metadata.name,
        sa.metadata.name === 'rolepolicy-k8s-gateway',
      ]);
    }
  });
});

describe('approval admission (docs/approvals.md, ADR 0026)', () => {
  const named = (dir: string, kind: string) =>
    objects(dir)
      .filter((o) => o.kind === kind)
      .map((o) => o.metadata.name);
  const paramRefs = (list: readonly Manifest[]) =>
    list
      .filter((o) => /AdmissionPolicyBinding$/.test(o.kind))
      .map((o) => (o['spec'] as { paramRef?: { namespace?: string } }).paramRef?.namespace);

  it('the base binds rolepolicy-decisions with its parameters and ships the approver and requester roles', () => {
    expect(named('deploy/base', 'ValidatingAdmissionPolicyBinding').sort()).toEqual([
      'rolepolicy-decisions',
      'rolepolicy-k8s-gateway-configmaps',
    ]);
    expect(named('deploy/base', 'ClusterRole')).toEqual(
      expect.arrayContaining(['rolepolicy-approver', 'rolepolicy-requester']),
    );
    expect(paramRefs(objects('deploy/base'))).toEqual(['rolepolicy-system', 'rolepolicy-system']);
  });

  it('without-approval-admission leaves the policy of decisions out, nothing else', () => {
    const without = 'deploy/overlays/without-approval-admission';
    expect(named(without, 'ValidatingAdmissionPolicy')).toEqual(['rolepolicy-k8s-gateway-configmaps']);
    expect(objects(without).length).toBe(objects('deploy/base').length - 2);
  });

  it('approval-identity-mutating adds the mutating policy; a namespace override moves every paramRef', async () => {
    const { objects: mutating } = await render('deploy/overlays/approval-identity-mutating');
    expect(mutating.filter((o) => o.kind === 'MutatingAdmissionPolicy').map((o) => o.metadata.name)).toEqual([
      'rolepolicy-decision-identities',
    ]);
    expect(paramRefs(mutating)).toEqual(['rolepolicy-system', 'rolepolicy-system', 'rolepolicy-system']);
    const dir = await mkdtemp(join(REPO_ROOT, 'deploy/.ns-override-'));
    try {
      await writeFile(
        join(dir, 'kustomization.yaml'),
        'resources: [../overlays/approval-identity-mutating]\nnamespace: db-ops\n',
      );
      const { objects: moved } = await render(dir);
      expect(paramRefs(moved)).toEqual(['db-ops', 'db-ops', 'db-ops']);
      const params = moved.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'rolepolicy-admission');
      expect(params?.metadata.namespace).toBe('db-ops');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('fleet overlays', () => {
  it('small: two executors with two executions each; large: KEDA owns the replicas, eight each', () => {
    const small = deployments('deploy/overlays/small').find((d) => d.metadata.name === 'rolepolicy-executor');
    expect(small?.spec.replicas).toBe(2);
    expect(envValue(container('deploy/overlays/small', 'executor'), 'EXECUTOR_CONCURRENCY')).toBe('2');
    const large = deployments('deploy/overlays/large').find((d) => d.metadata.name === 'rolepolicy-executor');
    expect(large?.spec.replicas).toBeUndefined();
    expect(envValue(container('deploy/overlays/large', 'executor'), 'EXECUTOR_CONCURRENCY')).toBe('8');
  });

  it('large: the gateway reads only Secrets labelled for rolepolicy; small keeps the default (ADR 0018)', () => {
    expect(envValue(container('deploy/overlays/large', 'k8s-gateway'), 'SECRET_READ_POLICY')).toBe(
      'labelled',
    );
    expect(envValue(container('deploy/overlays/small', 'k8s-gateway'), 'SECRET_READ_POLICY')).toBeUndefined();
  });

  it("large: the ScaledObject watches the executors' durable consumer; lag threshold = 2 x concurrency", async () => {
    const { SPINE_CONSUMERS } = await import('@rolepolicy/contracts');
    const consumer = SPINE_CONSUMERS.executor[0];
    const scaled = objects('deploy/overlays/large').find((o) => o.kind === 'ScaledObject') as
      | (Manifest & {
          spec: {
            scaleTargetRef: { name: string };
            triggers: { type: string; metadata: Record<string, string> }[];
          };
        })
      | undefined;
    expect(scaled?.spec.scaleTargetRef.name).toBe('rolepolicy-executor');
    const trigger = scaled?.spec.triggers[0];
    expect(trigger?.type).toBe('nats-jetstream');
    expect(trigger?.metadata).toMatchObject({ stream: consumer.stream, consumer: consumer.durable });
    const concurrency = Number(
      envValue(container('deploy/overlays/large', 'executor'), 'EXECUTOR_CONCURRENCY'),
    );
    expect(Number(trigger?.metadata['lagThreshold'])).toBe(2 * concurrency);
    // Replicas beyond maxAckPending / concurrency could never get a message.
    const max = (scaled?.spec as { maxReplicaCount?: number }).maxReplicaCount ?? 100;
    expect(max * concurrency).toBeLessThanOrEqual(consumer.maxAckPending);
    expect(objects('deploy/overlays/small').some((o) => o.kind === 'ScaledObject')).toBe(false);
  });
});

it('the schema check is not a formality: a wrong field type, a wrong KEDA field and a misspelt field are refused', async () => {
  const base = objects('deploy/base');
  const deployment = structuredClone(base.find((o) => o.kind === 'Deployment')!) as Deployment;
  const ports = deployment.spec.template.spec.containers[0]!.ports as unknown as { containerPort: unknown }[];
  ports[0]!.containerPort = 'http';
  await expect(validateAgainstSchema(deployment)).rejects.toThrow(/containerPort must be integer/);
  const scaled = structuredClone(objects('deploy/overlays/large').find((o) => o.kind === 'ScaledObject')!);
  (scaled['spec'] as Record<string, unknown>)['minReplicaCount'] = 'two';
  await expect(validateAgainstSchema(scaled)).rejects.toThrow(/minReplicaCount must be integer/);
  // Strict like fieldValidation=Strict: a misspelt field is refused, not ignored.
  const typo = structuredClone(base.find((o) => o.kind === 'Deployment')!) as Deployment;
  const probe = typo.spec.template.spec.containers[0] as unknown as Record<string, unknown>;
  probe['livenesProbe'] = probe['livenessProbe'];
  delete probe['livenessProbe'];
  await expect(validateAgainstSchema(typo)).rejects.toThrow(
    /unknown field spec\.template\.spec\.containers\.0\.livenesProbe/,
  );
});

it('deploy/base/crds holds exactly the CRDs of deploy/crds (kustomize cannot load files above its root)', async () => {
  const shipped = (await readdir(join(REPO_ROOT, 'deploy/crds'))).filter((f) => f.endsWith('.yaml')).sort();
  const copies = (await readdir(join(REPO_ROOT, 'deploy/base/crds')))
    .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
    .sort();
  expect(copies).toEqual(shipped);
  for (const file of shipped) {
    const copy = await readFile(join(REPO_ROOT, 'deploy/base/crds', file), 'utf8');
    expect(`${file}\n${copy}`).toBe(
      `${file}\n${await readFile(join(REPO_ROOT, 'deploy/crds', file), 'utf8')}`,
    );
  }
});

describe('kubectl apply of the rendered base to the API emulator', () => {
  let emu: Emulator;
  let cacheDir: string;

  beforeAll(async () => {
    emu = await startEmulator(); // no CRDs: the base installs them
    cacheDir = await mkdtemp(join(tmpdir(), 'rp-deploy-kubectl-'));
  });

  afterAll(async () => {
    await emu.stop();
    await rm(cacheDir, { recursive: true, force: true });
  });

  const kubectl = (args: readonly string[], input?: string) =>
    run(KUBECTL, [...args, '--cache-dir', cacheDir], input, {
      ...process.env,
      KUBECONFIG: emu.kubeconfigPath,
    });

  /** `<group>/<Kind>` of every kind the emulator serves, read with `kubectl api-resources`. */
  async function servedKinds(): Promise<Set<string>> {
    const out = await kubectl(['api-resources', '--no-headers']);
    return new Set(
      out
        .trim()
        .split('\n')
        .map((line) => line.trim().split(/\s+/))
        .map((cols) => `${groupOf(cols[cols.length - 3]!)}/${cols[cols.length - 1]}`),
    );
  }

  it('applies every kind the emulator serves (CRDs first, so the API learns the custom kinds); the rest passed the schemas', async () => {
    const base = objects('deploy/base');
    const crds = base.filter((o) => o.kind === 'CustomResourceDefinition');
    const crdYaml = crds.map((o) => JSON.stringify(o)).join('\n');
    const crdOut = await kubectl(['apply', '-f', '-'], crdYaml);
    expect(crdOut.trim().split('\n')).toHaveLength(5);

    const served = await servedKinds();
    for (const crd of crds)
      expect(served.has(`rolepolicy.io/${(crd['spec'] as { names: { kind: string } }).names.kind}`)).toBe(
        true,
      );
    const applicable = base.filter(
      (o) => o.kind !== 'CustomResourceDefinition' && served.has(`${groupOf(o.apiVersion)}/${o.kind}`),
    );
    const offline = base.filter((o) => o.kind !== 'CustomResourceDefinition' && !applicable.includes(o));
    // Namespace, ConfigMap, ServiceAccounts, RBAC and the admission policy at least; workloads, PDB and
    // ServiceMonitor once the emulator serves them (today they are checked offline by the schema test above).
    expect(applicable.map((o) => o.kind)).toEqual(
      expect.arrayContaining([
        'Namespace',
        'ConfigMap',
        'ServiceAccount',
        'ClusterRole',
        'ClusterRoleBinding',
        'Role',
        'RoleBinding',
        'ValidatingAdmissionPolicy',
        'ValidatingAdmissionPolicyBinding',
      ]),
    );
    for (const object of offline) await validateAgainstSchema(object);

    const yaml = applicable.map((o) => JSON.stringify(o)).join('\n');
    const out = await kubectl(['apply', '-f', '-'], yaml);
    expect(out.trim().split('\n')).toHaveLength(applicable.length);
    for (const object of applicable) {
      const ns = object.metadata.namespace ? ['-n', object.metadata.namespace] : [];
      const name = await kubectl([
        'get',
        object.kind.toLowerCase(),
        object.metadata.name,
        ...ns,
        '-o',
        'name',
      ]);
      expect(name.trim()).toMatch(new RegExp(`/${object.metadata.name}$`));
    }
    const again = await kubectl(['apply', '-f', '-'], yaml);
    expect(
      again
        .trim()
        .split('\n')
        .every((line) => line.endsWith(' unchanged')),
    ).toBe(true);
    const config = await kubectl([
      'get',
      'configmap',
      'rolepolicy-config',
      '-n',
      'rolepolicy-system',
      '-o',
      'jsonpath={.data.NATS_URL}',
    ]);
    expect(config).toBe('nats://nats.nats.svc:4222');
  });
});
