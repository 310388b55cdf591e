// Pinned encodings: the exact bytes and digest of a fixed input per encoding. If one of these fails, the
// encoding changed: bump its tag (e.g. approval-effect/v2) and add a new fixture; never edit these.
import type { Change } from '../model/change.js';
import { changeDigest, changeDigestDocument } from './change-digest.js';
import { contentDigest, contentDigestDocument } from './content-digest.js';
import { canonicalJson } from './canonical-json.js';
import { logicalFingerprint, passwordSourceDigest } from './fingerprints.js';

describe('pinned digest encodings', () => {
  it('rolepolicy.io/approval-effect/v1: exact bytes and digest', () => {
    const changes: Change[] = [
      { kind: 'set_password', name: 'app', password_source: 'role-passwords:app:7' },
      {
        kind: 'grant',
        role: 'reporting',
        privileges: ['SELECT'],
        object_type: 'table',
        name: 'orders',
        schema: 'inventory',
      },
    ];
    const input = {
      mode: 'authoritative' as const,
      target: 'default/postgres-credentials/url',
      targetPhysicalIdentity: '7412330000000000001',
      targetLogicalFingerprint: 'sha256:fingerprint',
      ownedRoles: ['reporting', 'app'],
      ownedSchemas: ['inventory'],
      changes,
    };
    expect(changeDigestDocument(input)).toBe(
      '{"effect_encoding":"rolepolicy.io/approval-effect/v1","effects":[{"grant":{"name":"orders","object_type":"table","privileges":["SELECT"],"role":"reporting","schema":"inventory"}},{"set_password":{"name":"app","password_source":"role-passwords:app:7"}}],"owned_roles":["app","reporting"],"owned_schemas":["inventory"],"reconciliation_mode":"authoritative","target":"default/postgres-credentials/url","target_logical_fingerprint":"sha256:fingerprint","target_physical_identity":"7412330000000000001"}',
    );
    expect(changeDigest(input)).toEqual({
      digest: 'sha256:460586ae12bf764a7e452478bb912805f83086a468b375d94f816bfa0d15c116',
      encoding: 'rolepolicy.io/approval-effect/v1',
    });
  });

  it('rolepolicy.io/policy-content/v2: exact bytes and digest (API defaults filled, nulls and empties dropped)', () => {
    // v1 (never stored on a candidate) did not fill API defaults; see ADR 0007.
    const content = {
      roles: [
        { name: 'reporting-reader', login: true, comment: null, config: {}, password: { generate: {} } },
      ],
      grants: [],
    };
    expect(contentDigestDocument(content)).toBe(
      '{"content":{"reconciliation_mode":"authoritative","roles":[{"external":false,"login":true,"name":"reporting-reader","password":{"generate":{"length":32,"secretKey":"password","secretName":"{policy}-gen-{role}"}},"preserve_undeclared_grants":false}]},"encoding":"rolepolicy.io/policy-content/v2"}',
    );
    expect(contentDigest(content)).toEqual({
      digest: 'sha256:25952daa5e9b1b9c6607a5ec2cf92066887c8954c87ae6ecb16e42c43c7222d4',
      encoding: 'rolepolicy.io/policy-content/v2',
    });
  });

  it('passwordSourceDigest: canonical JSON of the sorted role -> source map', () => {
    const sources = { b: 'b-secret:password:3', a: 'a-secret:password:1' };
    expect(canonicalJson(sources)).toBe('{"a":"a-secret:password:1","b":"b-secret:password:3"}');
    expect(passwordSourceDigest(sources)).toBe(
      'sha256:cde06bf569f09b5dc57fb37dcfb397a7b89c8d05c14dce6d39d9e742b6725167',
    );
  });

  it('logicalFingerprint: lower(host) NUL port NUL database', () => {
    // Bytes: "db.example.com\05432\0App" (host lowercased, database case kept).
    expect(logicalFingerprint('DB.Example.com', 5432, 'App')).toBe(
      'sha256:793e407b7568849b572b8a2d19ca48ee029d88fcdc020fdaea85ce0bc83033da',
    );
    expect(logicalFingerprint('db.example.com', '5432', 'App')).toBe(
      logicalFingerprint('DB.Example.com', 5432, 'App'),
    );
    expect(logicalFingerprint('db.example.com', 5432, 'app')).not.toBe(
      logicalFingerprint('db.example.com', 5432, 'App'),
    );
  });
});
