// The inspection request carries a sealed connection and a ManagedScope; malformed ones (the sealed
// connection once opened, too) are refused with paths only, so a password never reaches a log through a
// validation message. Sealing: only the inspectors' key opens it (ADR 0024).
import { validatePayload } from '../contract.js';
import { exportedKeyPair, keyPairFromPrivateKey } from '../secrets/seal.js';
import { openInspectConnection, sealInspectQuery } from '../secrets/inspect-seal.js';
import {
  inspectRequestContract,
  inspectSealedConnectionContract,
  type InspectRequestV1,
} from './inspect-request.js';
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

const query = {
  v: 1 as const,
  requestId: 'r-1',
  source: { apiVersion: 'rolepolicy.io/v1alpha1', kind: 'PostgresPolicy', namespace: 'ns', name: 'p' },
  generation: 3,
  scope,
};
const keys = exportedKeyPair();
/** What the sealed connection opens to (its contract validates the connection's shape). */
const request = (connection: unknown): unknown => ({ v: 1, connection });

describe('rp.inspect.request v1', () => {
  it('accepts a URL or params connection with an optional setRole', () => {
    expect(validatePayload(inspectSealedConnectionContract, request({ url: 'postgres://db/x' })).ok).toBe(
      true,
    );
    expect(
      validatePayload(
        inspectSealedConnectionContract,
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
      const result = validatePayload(inspectSealedConnectionContract, request(connection));
      expect(result.ok).toBe(false);
      if (!result.ok) {
        expect(result.detail).toContain('/connection');
        expect(result.detail).not.toContain('Secret-pw');
      }
    }
  });

  it('refuses an unknown object type or privilege in the scope', () => {
    const bad = { ...scope, wildcards: [{ ...scope.wildcards[0], object_type: 'index' }] };
    const sealed = sealInspectQuery({ ...query, connection: { url: 'postgres://db/x' } }, keys.publicKey);
    expect(validatePayload(inspectRequestContract, sealed).ok).toBe(true);
    expect(validatePayload(inspectRequestContract, { ...sealed, scope: bad }).ok).toBe(false);
  });

  it("carries the connection sealed: no credential in the message, opened only with the inspectors' key", () => {
    const connection = { url: 'postgres://u:Secret-pw@db/x' };
    const sealed: InspectRequestV1 = sealInspectQuery({ ...query, connection }, keys.publicKey);
    const wire = JSON.stringify(sealed);
    expect(wire).not.toContain('Secret-pw');
    expect(wire).not.toContain(Buffer.from('Secret-pw').toString('base64'));
    expect(openInspectConnection(sealed, keyPairFromPrivateKey(keys.privateKey))).toEqual({
      ok: true,
      connection,
    });
    const other = keyPairFromPrivateKey(exportedKeyPair().privateKey);
    const refused = openInspectConnection(sealed, other);
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.message).toContain('INSPECT_SEAL_PRIVATE_KEY');
  });

  it('refuses a request with the connection in clear', () => {
    const clear = { ...query, connection: { url: 'postgres://u:Secret-pw@db/x' } };
    const result = validatePayload(inspectRequestContract, clear);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.detail).not.toContain('Secret-pw');
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
