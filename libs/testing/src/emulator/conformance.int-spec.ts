// The admission conformance suite of @rolepolicy/kube replayed through @kubernetes/client-node against
// the emulator serving deploy/crds: every spec rule accepted and rejected with the API server's exact message.
import { fileURLToPath } from 'node:url';
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import {
  CONFORMANCE_CASES,
  GROUP,
  KIND_NAMES,
  VERSION,
  expectedErrorLine,
  getPath,
  type ConformanceCase,
  type ConformanceStep,
} from '@rolepolicy/kube';
import { startEmulator, type Emulator } from './start.js';
import { apiFailure } from './test-support.js';

const crdDir = fileURLToPath(new URL('../../../../deploy/crds', import.meta.url));
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

let emu: Emulator;
let co: CustomObjectsApi;

beforeAll(async () => {
  emu = await startEmulator({ crdDir });
  co = emu.kubeConfig().makeApiClient(CustomObjectsApi);
});

afterAll(async () => {
  await emu.stop();
});

function write(c: ConformanceCase, step: ConformanceStep, namespace: string, name: string): Promise<any> {
  const coords = { group: GROUP, version: VERSION, plural: KIND_NAMES[c.kind].plural, namespace };
  if (step.op === 'create') {
    const object = step.object as { metadata: Record<string, unknown> };
    return co.createNamespacedCustomObject({
      ...coords,
      body: { ...object, metadata: { ...object.metadata, namespace } },
    });
  }
  const request = { ...coords, name, body: step.patch };
  return step.subresource === 'status'
    ? co.patchNamespacedCustomObjectStatus(request, merge)
    : co.patchNamespacedCustomObject(request, merge);
}

async function replay(c: ConformanceCase, namespace: string): Promise<void> {
  let name = '';
  for (const [i, step] of c.steps.entries()) {
    const where = `${c.name} step ${i + 1}`;
    if (step.op === 'create') name = String((step.object['metadata'] as Record<string, unknown>)['name']);
    const exp = step.expect;
    if (exp.allowed) {
      const stored = await write(c, step, namespace, name);
      if (exp.stored !== undefined) expect(stored).toMatchObject(exp.stored);
      for (const path of exp.absent ?? []) {
        expect({ where, path, value: getPath(stored, path) }).toEqual({ where, path, value: undefined });
      }
    } else {
      const failure = await apiFailure(write(c, step, namespace, name));
      expect({ where, code: failure.code, reason: failure.body.reason }).toEqual({
        where,
        code: 422,
        reason: 'Invalid',
      });
      expect(failure.body.message).toContain(`${c.kind}.${GROUP} "${name}" is invalid: `);
      expect(failure.body.message).toContain(expectedErrorLine(exp));
      expect((failure.body.details as { causes: unknown[] }).causes).toContainEqual({
        reason: expect.any(String),
        field: exp.field,
        message: exp.body,
      });
    }
  }
}

describe('admission conformance through client-node and the emulator', () => {
  it.each(CONFORMANCE_CASES.map((c, i) => [c.name, c, `conf-${i}`] as const))('%s', (_name, c, namespace) =>
    replay(c, namespace),
  );
});
