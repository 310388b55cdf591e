// The TypeScript types come from the same TypeBox nodes as deploy/crds: objects typed with them are
// exactly what the API server admits, and the compiler rejects fields the CRDs do not declare.
import { admit } from './admission/admit.js';
import type { EphemeralAccessRequest, PostgresPolicy, PostgresPolicyPlanStatus } from './types.js';

describe('generated types agree with the CRDs', () => {
  it('a fully typed PostgresPolicy is admitted unchanged apart from defaults', () => {
    const policy: PostgresPolicy = {
      apiVersion: 'rolepolicy.io/v1alpha1',
      kind: 'PostgresPolicy',
      metadata: { name: 'typed', namespace: 'default' },
      spec: {
        connection: { params: { host: 'db', port: 5432, passwordSecret: { name: 'db', key: 'password' } } },
        mode: 'observe',
        approval: 'manual',
        roles: [
          {
            name: 'app',
            login: true,
            config: { statement_timeout: '5s' },
            password: { generate: { length: 40 } },
          },
        ],
        grants: [
          { object: { type: 'table', schema: 'app', name: '*' }, privileges: ['SELECT'], role: 'app' },
        ],
        default_privileges: [
          { schema: 'app', grant: [{ on_type: 'table', privileges: ['SELECT'], role: 'app' }] },
        ],
        profiles: { ro: { grants: [{ object: { type: 'table' }, privileges: ['SELECT'] }] } },
        schemas: [{ name: 'app', profiles: ['ro'] }],
      },
    };
    const result = admit({ kind: 'PostgresPolicy', operation: 'CREATE', object: policy });
    expect(result.allowed).toBe(true);
    if (result.allowed) expect(result.object).toMatchObject(policy as unknown as Record<string, unknown>);
  });

  it('status types carry the decision fields the rules protect', () => {
    const status: PostgresPolicyPlanStatus = {
      phase: 'Approved',
      decidedBy: { username: 'bob', groups: [] },
      conditions: [{ type: 'Approved', status: 'True' }],
      changeDigest: 'sha256:1',
      physicalIdentityAvailable: false,
    };
    const request: EphemeralAccessRequest = {
      apiVersion: 'rolepolicy.io/v1alpha1',
      kind: 'EphemeralAccessRequest',
      metadata: { name: 'r' },
      spec: {
        accessPolicyRef: { name: 'p' },
        subject: { role: 'alice' },
        requestedBy: { username: 'alice' },
      },
      // @ts-expect-error: `phase` values are the spec's enum, nothing else
      status: { phase: 'Granted' },
    };
    expect(status.decidedBy?.username).toBe('bob');
    expect(request.spec.subject.role).toBe('alice');
  });
});
