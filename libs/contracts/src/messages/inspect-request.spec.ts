// The inspection request carries a resolved connection and a ManagedScope; malformed ones are refused
// with paths only, so a password in the payload never reaches a log through a validation message.
import { validatePayload } from '../contract.js';
import { inspectRequestContract, type InspectRequestV1 } from './inspect-request.js';
import { inspectReplyContract } from './inspect-reply.js';

const scope: InspectRequestV1['scope'] = {
  roles: ['app_reader'],
  membership_grantors: [],
  schemas: ['app'],
  owned_schemas: [],
  wildcards: [{ grantee: 'app_reader', object_type: 'table', schema: 'app', privileges: ['SELECT'] }],
  public_objects: [{ object_type: 'schema', schema: null, name: 'app', privileges: ['CREATE'] }],
  default_privilege_scopes: [
    { owner: 'app_owner', scope: { type: 'schema', schema: 'app' }, on_type: 'table', public_privileges: [] },
  ],
  include_database_privileges: false,
  database_targets: [],
  function_signatures: [{ schema: 'app', name: 'f(integer)' }],
};

const request = (connection: unknown): unknown => ({
  v: 1,
  requestId: 'r-1',
  source: { apiVersion: 'rolepolicy.io/v1alpha1', kind: 'PostgresPolicy', namespace: 'ns', name: 'p' },
  generation: 3,
  connection,
  scope,
});

describe('rp.inspect.request v1', () => {
  it('accepts a URL or params connection with an optional setRole', () => {
    expect(validatePayload(inspectRequestContract, request({ url: 'postgres://db/x' })).ok).toBe(true);
    expect(
      validatePayload(
        inspectRequestContract,
        request({
          params: { host: 'db', dbname: 'x', password: 'pw', sslMode: 'require' },
          setRole: 'admin',
        }),
      ).ok,
    ).toBe(true);
  });

  it('refuses a setRole outside the spec pattern, an unknown sslMode and extra connection fields, naming paths not values', () => {
    for (const connection of [
      { url: 'postgres://u:Secret-pw@db/x', setRole: 'a.b' },
      { params: { host: 'db', dbname: 'x', password: 'Secret-pw', sslMode: 'sometimes' } },
      { url: 'postgres://u:Secret-pw@db/x', token: 'Secret-pw' },
    ]) {
      const result = validatePayload(inspectRequestContract, request(connection));
      expect(result.ok).toBe(false);
      if (!result.ok) {
        expect(result.detail).toContain('/connection');
        expect(result.detail).not.toContain('Secret-pw');
      }
    }
  });

  it('refuses an unknown object type or privilege in the scope', () => {
    const bad = { ...scope, wildcards: [{ ...scope.wildcards[0], object_type: 'index' }] };
    const result = validatePayload(inspectRequestContract, {
      ...(request({ url: 'postgres://db/x' }) as object),
      scope: bad,
    });
    expect(result.ok).toBe(false);
  });
});

describe('inspect reply v1', () => {
  it('is inline, an object reference, or a classified error', () => {
    const inline = {
      v: 1,
      requestId: 'r',
      status: 'inline',
      snapshot: { server_version_num: 150000, current_database: 'x', roles: [] },
    };
    const object = {
      v: 1,
      requestId: 'r',
      status: 'object',
      object: { bucket: 'b', name: 'snapshot/r', bytes: 10 },
    };
    const error = {
      v: 1,
      requestId: 'r',
      status: 'error',
      error: { class: 'transient', code: 'ECONNREFUSED', message: 'refused' },
    };
    for (const reply of [inline, object, error])
      expect(validatePayload(inspectReplyContract, reply).ok).toBe(true);
    expect(
      validatePayload(inspectReplyContract, { ...error, error: { ...error.error, class: 'maybe' } }).ok,
    ).toBe(false);
  });
});
