// Behaviour of the admission engine itself: API-server defaults, pruning, subresource resets, error shape.
// Rule-by-rule conformance (every spec message) lives in conformance.spec.ts.
import { buildCrd } from '../crds/crd-definitions.js';
import { admit, compileCrd, compiledCrdOf } from './admit.js';

const policy = (spec: Record<string, unknown>) => ({
  apiVersion: 'rolepolicy.io/v1alpha1',
  kind: 'PostgresPolicy',
  metadata: { name: 'app', namespace: 'default' },
  spec,
});

function stored(result: ReturnType<typeof admit>): Record<string, unknown> {
  if (!result.allowed) throw new Error(result.status.message);
  return result.object;
}

describe('API-server defaults', () => {
  it('a minimal PostgresPolicy reads back with mode apply, authoritative, 5m, not suspended, empty lists and {} profiles', () => {
    const obj = stored(
      admit({
        kind: 'PostgresPolicy',
        operation: 'CREATE',
        object: policy({ connection: { secretRef: { name: 'db' } } }),
      }),
    );
    expect(obj['spec']).toEqual({
      connection: { secretRef: { name: 'db' }, secretKey: 'DATABASE_URL' },
      mode: 'apply',
      reconciliation_mode: 'authoritative',
      interval: '5m',
      suspend: false,
      allow_schema_owner_transfers: false,
      default_privileges: [],
      grants: [],
      memberships: [],
      profiles: {},
      retirements: [],
      roles: [],
      schemas: [],
    });
  });

  it('approval is never defaulted (its inference is deprecated, not an API-server default)', () => {
    const obj = stored(
      admit({ kind: 'PostgresPolicy', operation: 'CREATE', object: policy({ connection: {} }) }),
    );
    expect(obj['spec']).not.toHaveProperty('approval');
  });

  it('params.port gets no API-server default: 5432 applies only when neither port nor portSecret is set', () => {
    const obj = stored(
      admit({
        kind: 'PostgresPolicy',
        operation: 'CREATE',
        object: policy({ connection: { params: { host: 'db' } } }),
      }),
    );
    expect(obj['spec']).toMatchObject({ connection: { params: { host: 'db' } } });
    expect((obj['spec'] as { connection: { params: object } }).connection.params).toEqual({ host: 'db' });
  });

  it('role password: generate gets length 32, secretKey password, secretName {policy}-gen-{role}; secretRef gets no secretKey', () => {
    const obj = stored(
      admit({
        kind: 'PostgresPolicy',
        operation: 'CREATE',
        object: policy({
          connection: {},
          roles: [
            { name: 'gen', password: { generate: {} } },
            { name: 'ref', password: { secretRef: { name: 's' } } },
          ],
        }),
      }),
    );
    const roles = (obj['spec'] as { roles: Record<string, unknown>[] }).roles;
    expect(roles[0]).toEqual({
      name: 'gen',
      external: false,
      preserve_undeclared_grants: false,
      password: { generate: { length: 32, secretKey: 'password', secretName: '{policy}-gen-{role}' } },
    });
    expect(roles[1]?.['password']).toEqual({ secretRef: { name: 's' } });
  });

  it('candidate content is stored exactly as written (no defaults)', () => {
    const content = {
      roles: [{ name: 'a', password: { generate: {} } }],
      memberships: [{ role: 'r', members: [] }],
    };
    const obj = stored(
      admit({
        kind: 'PostgresPolicyCandidate',
        operation: 'CREATE',
        object: {
          apiVersion: 'rolepolicy.io/v1alpha1',
          kind: 'PostgresPolicyCandidate',
          metadata: { name: 'c1' },
          spec: { content, policyRef: { name: 'app' } },
        },
      }),
    );
    expect((obj['spec'] as { content: unknown }).content).toEqual(content);
  });
});

describe('pruning and null handling', () => {
  it('drops unknown fields but keeps metadata as written', () => {
    const obj = stored(
      admit({
        kind: 'PostgresPolicy',
        operation: 'CREATE',
        object: {
          ...policy({ connection: {}, bogus: 1 }),
          metadata: { name: 'app', labels: { a: 'b' } },
          extra: true,
        },
      }),
    );
    expect(obj).not.toHaveProperty('extra');
    expect(obj['spec']).not.toHaveProperty('bogus');
    expect(obj['metadata']).toEqual({ name: 'app', labels: { a: 'b' } });
  });

  it('keeps null where a field is nullable and replaces a non-nullable null by its default', () => {
    const obj = stored(
      admit({
        kind: 'PostgresPolicy',
        operation: 'CREATE',
        object: policy({ connection: {}, approval: null, suspend: null }),
      }),
    );
    expect(obj['spec']).toMatchObject({ approval: null, suspend: false });
  });
});

describe('status subresource', () => {
  const plan = {
    apiVersion: 'rolepolicy.io/v1alpha1',
    kind: 'PostgresPolicyPlan',
    metadata: { name: 'p1' },
    spec: {
      managedDatabaseIdentity: 'db',
      policyGeneration: 1,
      policyRef: { name: 'app' },
      reconciliationMode: 'authoritative',
    },
  };

  it('status sent on create is ignored', () => {
    const obj = stored(
      admit({
        kind: 'PostgresPolicyPlan',
        operation: 'CREATE',
        object: { ...plan, status: { phase: 'Applied' } },
      }),
    );
    expect(obj).not.toHaveProperty('status');
  });

  it('a /status write changes only status; a main write changes only spec and metadata', () => {
    const old = stored(admit({ kind: 'PostgresPolicyPlan', operation: 'CREATE', object: plan }));
    const viaStatus = stored(
      admit({
        kind: 'PostgresPolicyPlan',
        operation: 'UPDATE',
        subresource: 'status',
        oldObject: old,
        object: { ...old, spec: { ...plan.spec, policyGeneration: 9 }, status: { phase: 'Applying' } },
      }),
    );
    expect(viaStatus['spec']).toEqual(old['spec']);
    expect(viaStatus['status']).toEqual({ phase: 'Applying', sqlTruncated: false });
    const viaMain = stored(
      admit({
        kind: 'PostgresPolicyPlan',
        operation: 'UPDATE',
        oldObject: viaStatus,
        object: { ...viaStatus, spec: { ...plan.spec, policyGeneration: 2 }, status: { phase: 'Failed' } },
      }),
    );
    expect(viaMain['status']).toEqual(viaStatus['status']);
    expect(viaMain['spec']).toMatchObject({ policyGeneration: 2 });
  });
});

describe('rejections are shaped like kube-apiserver responses', () => {
  it('returns a 422 Invalid Status with causes and the kubectl-visible message', () => {
    const result = admit({
      kind: 'PostgresPolicy',
      operation: 'CREATE',
      object: policy({ connection: { secretRef: { name: 'a' }, params: {} }, mode: 'bogus' }),
    });
    expect(result.allowed).toBe(false);
    if (result.allowed) return;
    expect(result.status).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'PostgresPolicy.rolepolicy.io "app" is invalid: [spec.mode: Unsupported value: "bogus": supported values: "apply", "observe", "plan", ' +
        'spec.connection: Invalid value: "object": secretRef and params are mutually exclusive]',
      reason: 'Invalid',
      details: {
        name: 'app',
        group: 'rolepolicy.io',
        kind: 'PostgresPolicy',
        causes: [
          {
            reason: 'FieldValueNotSupported',
            message: 'Unsupported value: "bogus": supported values: "apply", "observe", "plan"',
            field: 'spec.mode',
          },
          {
            reason: 'FieldValueInvalid',
            message: 'Invalid value: "object": secretRef and params are mutually exclusive',
            field: 'spec.connection',
          },
        ],
      },
      code: 422,
    });
  });

  it('a single error is printed without brackets', () => {
    const result = admit({ kind: 'PostgresPolicy', operation: 'CREATE', object: policy({}) });
    expect(result.allowed ? '' : result.status.message).toBe(
      'PostgresPolicy.rolepolicy.io "app" is invalid: spec.connection: Required value',
    );
  });
});

describe('compilation cache', () => {
  it('compiles a CRD once: the same definition object yields the same compiled programs', () => {
    const crd = buildCrd('PostgresPolicyPlan');
    expect(compileCrd(crd)).toBe(compileCrd(crd));
    expect(compiledCrdOf('PostgresPolicyPlan')).toBe(compiledCrdOf('PostgresPolicyPlan'));
  });
});

describe('Kubernetes CEL value semantics', () => {
  const candidate = (roles: object[]) => ({
    apiVersion: 'rolepolicy.io/v1alpha1',
    kind: 'PostgresPolicyCandidate',
    metadata: { name: 'c-order' },
    spec: { policyRef: { name: 'app' }, content: { roles } },
  });

  it('list-map equality ignores order: reordering roles does not change an immutable candidate spec', () => {
    const created = admit({
      kind: 'PostgresPolicyCandidate',
      operation: 'CREATE',
      object: candidate([{ name: 'a' }, { name: 'b' }]),
    });
    if (!created.allowed) throw new Error(created.status.message);
    const reordered = admit({
      kind: 'PostgresPolicyCandidate',
      operation: 'UPDATE',
      oldObject: created.object,
      object: candidate([{ name: 'b' }, { name: 'a' }]),
    });
    expect(reordered.allowed).toBe(true);
  });

  it('int32 fields reject values outside the int32 range', () => {
    const result = admit({
      kind: 'PostgresPolicy',
      operation: 'CREATE',
      object: { ...policy({ connection: {}, roles: [{ name: 'r', connection_limit: 2 ** 31 }] }) },
    });
    expect(result.allowed ? [] : result.errors.map((e) => `${e.field}: ${e.detail}`)).toEqual([
      'spec.roles[0].connection_limit: spec.roles[0].connection_limit in body must be of type int32: "2147483648"',
    ]);
  });
});

describe('secrets stay out of rejections', () => {
  it('a literal connection password of the wrong shape is reported by type, never by value', () => {
    const result = admit({
      kind: 'PostgresPolicy',
      operation: 'CREATE',
      object: policy({ connection: { params: { password: { value: 'hunter2-secret' } } } }),
    });
    expect(result.allowed).toBe(false);
    expect(JSON.stringify(result)).not.toContain('hunter2-secret');
  });
});
