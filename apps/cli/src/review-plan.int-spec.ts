// `rolepolicy review --plan NAME -n NAMESPACE --kubeconfig PATH` as a child process against the Kubernetes
// API emulator: the stored artifact (plain JSON or gzip) printed in every format, and a clear error naming
// the plan when the plan, its annotation, its ConfigMap or a valid artifact is missing.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { GROUP, KIND_NAMES, VERSION } from '@rolepolicy/kube';
import { formatReviewArtifactJson, formatReviewText, type ReviewArtifact } from '@rolepolicy/review';
import { startEmulator, type Emulator } from '@rolepolicy/testing';

import { runCli } from './test-support/run-cli.js';

const CRD_DIR = fileURLToPath(new URL('../../../deploy/crds', import.meta.url));
const GOLDEN = fileURLToPath(
  new URL('../../../libs/review/src/__golden__/realistic-pg16.json', import.meta.url),
);
const NS = 'review-plan';
const SLOW = 60_000;

let emulator: Emulator;
let custom: CustomObjectsApi;
let core: CoreV1Api;
const artifact = JSON.parse(readFileSync(GOLDEN, 'utf8')) as ReviewArtifact;

/** Creates a plan (with the review annotation unless `configMap` is null) and returns its uid. */
async function createPlan(name: string, configMap: string | null): Promise<string> {
  const created = (await custom.createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    plural: KIND_NAMES.PostgresPolicyPlan.plural,
    namespace: NS,
    body: {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'PostgresPolicyPlan',
      metadata: {
        name,
        ...(configMap === null ? {} : { annotations: { 'rolepolicy.io/review-configmap': configMap } }),
      },
      spec: {
        managedDatabaseIdentity: `${NS}/db:5432/app`,
        policyGeneration: 1,
        policyRef: { name: 'shop' },
        reconciliationMode: 'authoritative',
      },
    },
  })) as { metadata: { uid: string } };
  return created.metadata.uid;
}

async function createConfigMap(
  name: string,
  ownerUid: string,
  payload: { data?: Record<string, string>; binaryData?: Record<string, string> },
): Promise<void> {
  await core.createNamespacedConfigMap({
    namespace: NS,
    body: {
      metadata: {
        name,
        ownerReferences: [
          {
            apiVersion: `${GROUP}/${VERSION}`,
            kind: 'PostgresPolicyPlan',
            name: name.replace(/-review$/, ''),
            uid: ownerUid,
          },
        ],
      },
      ...payload,
    },
  });
}

const review = (plan: string, format: string) =>
  runCli(['review', '--plan', plan, '-n', NS, '--kubeconfig', emulator.kubeconfigPath, '--format', format]);

beforeAll(async () => {
  emulator = await startEmulator({ crdDir: CRD_DIR });
  const kc = emulator.kubeConfig(NS);
  custom = kc.makeApiClient(CustomObjectsApi);
  core = kc.makeApiClient(CoreV1Api);
  const gz = await createPlan('shop-gz', 'shop-gz-review');
  await createConfigMap('shop-gz-review', gz, {
    binaryData: { 'review.json.gz': gzipSync(JSON.stringify(artifact)).toString('base64') },
  });
  const plain = await createPlan('shop-plain', 'shop-plain-review');
  await createConfigMap('shop-plain-review', plain, { data: { 'review.json': JSON.stringify(artifact) } });
  await createPlan('shop-old', null);
  await createPlan('shop-lost', 'shop-lost-review');
  const bad = await createPlan('shop-bad', 'shop-bad-review');
  await createConfigMap('shop-bad-review', bad, { data: { 'review.json': '{"schema_version":"other"}' } });
  const stranger = await createPlan('shop-stranger', 'shop-gz-review');
  expect(stranger).not.toBe(gz);
}, SLOW);

afterAll(async () => {
  await emulator?.stop();
});

describe('rolepolicy review --plan', () => {
  it(
    'prints the stored gzip artifact as JSON, text and HTML, exactly as the renderers do',
    async () => {
      const json = await review('shop-gz', 'json');
      expect(json.stderr).toBe('');
      expect(json.code).toBe(0);
      expect(json.stdout).toBe(formatReviewArtifactJson(artifact));
      const text = await review('shop-gz', 'text');
      expect(text.code).toBe(0);
      expect(text.stdout).toBe(formatReviewText(artifact));
      const html = await review('shop-gz', 'html');
      expect(html.code).toBe(0);
      expect(html.stdout).toMatch(/^<!doctype html>/i);
      expect(html.stdout).toContain('<svg');
    },
    SLOW,
  );

  it(
    'reads a plain JSON artifact too',
    async () => {
      const json = await review('shop-plain', 'json');
      expect(json.code).toBe(0);
      expect(JSON.parse(json.stdout)).toEqual(artifact);
    },
    SLOW,
  );

  it.each([
    ['shop-nope', 'plan "review-plan/shop-nope" not found'],
    [
      'shop-old',
      'plan "review-plan/shop-old" has no review artifact (no rolepolicy.io/review-configmap annotation',
    ],
    [
      'shop-lost',
      'plan "review-plan/shop-lost": its review artifact (ConfigMap "shop-lost-review") is missing',
    ],
    [
      'shop-bad',
      'plan "review-plan/shop-bad": ConfigMap "shop-bad-review" does not hold a valid review artifact v2',
    ],
    [
      'shop-stranger',
      'plan "review-plan/shop-stranger": ConfigMap "shop-gz-review" belongs to another object',
    ],
  ])(
    '%s: exit 1 with an error naming the plan',
    async (plan, message) => {
      const run = await review(plan, 'text');
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain(`rolepolicy: ${message}`);
    },
    SLOW,
  );

  it(
    'refuses --plan without -n, and -f together with --plan',
    async () => {
      const noNamespace = await runCli([
        'review',
        '--plan',
        'shop-gz',
        '--kubeconfig',
        emulator.kubeconfigPath,
      ]);
      expect(noNamespace.code).toBe(1);
      expect(noNamespace.stderr).toContain('--plan needs -n NAMESPACE');
      const both = await runCli(['review', '--plan', 'shop-gz', '-n', NS, '-f', 'policy.yaml']);
      expect(both.code).toBe(1);
      expect(both.stderr).toContain('use either -f FILE or --plan NAME, not both');
    },
    SLOW,
  );
});
