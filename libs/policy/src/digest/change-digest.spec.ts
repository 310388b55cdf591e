import fc from 'fast-check';
import type { Change } from '../model/change.js';
import { changeDigest, ChangeDigestError, type ChangeDigestInput } from './change-digest.js';

const grant = (role: string, privileges: ('SELECT' | 'INSERT')[]): Change => ({
  kind: 'grant',
  role,
  privileges,
  object_type: 'table',
  name: 'orders',
  schema: 'inventory',
});

const changes: readonly Change[] = [
  grant('reporting', ['SELECT']),
  {
    kind: 'create_role',
    name: 'app',
    state: {
      login: true,
      superuser: false,
      createdb: false,
      createrole: false,
      inherit: true,
      replication: false,
      bypassrls: false,
      connection_limit: -1,
      comment: null,
      password_valid_until: null,
    },
  },
  { kind: 'add_member', role: 'readers', member: 'app', inherit: true, admin: false },
  { kind: 'set_password', name: 'app', password_source: 'app-secret:password:7' },
  {
    kind: 'alter_role',
    name: 'app',
    attributes: [
      { kind: 'login', value: true },
      { kind: 'set_config', parameter: 'search_path', value: 'app' },
    ],
  },
  {
    kind: 'revoke_default_privilege',
    owner: 'o',
    scope: { type: 'global' },
    on_type: 'table',
    grantee: 'PUBLIC',
    privileges: ['SELECT'],
  },
];

const base: ChangeDigestInput = {
  mode: 'authoritative',
  target: 'default/pg/url',
  targetPhysicalIdentity: '7412330000000000001',
  targetLogicalFingerprint: 'sha256:abc',
  ownedRoles: ['app', 'reporting'],
  ownedSchemas: ['inventory'],
  changes,
};

const digest = (input: Partial<ChangeDigestInput>): string => changeDigest({ ...base, ...input }).digest;

describe('changeDigest', () => {
  it('is a sha256: digest tagged rolepolicy.io/approval-effect/v1', () => {
    expect(changeDigest(base)).toEqual({
      digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      encoding: 'rolepolicy.io/approval-effect/v1',
    });
  });

  it('is independent of change order, privilege order, attribute order and owned-list order', () => {
    fc.assert(
      fc.property(fc.shuffledSubarray([...changes], { minLength: changes.length }), (shuffled) => {
        expect(digest({ changes: shuffled, ownedRoles: ['reporting', 'app', 'app'] })).toBe(digest({}));
      }),
    );
    const reordered = changes.map((c) =>
      c.kind === 'alter_role' ? { ...c, attributes: [...c.attributes].reverse() } : c,
    );
    expect(digest({ changes: reordered })).toBe(digest({}));
    expect(digest({ changes: [grant('r', ['SELECT', 'INSERT'])] })).toBe(
      digest({ changes: [grant('r', ['INSERT', 'SELECT'])] }),
    );
  });

  it.each<[string, Partial<ChangeDigestInput>]>([
    ['mode', { mode: 'adopt' }],
    ['connection target reference', { target: 'default/other/url' }],
    ['physical identity', { targetPhysicalIdentity: '1' }],
    ['physical identity becoming unavailable', { targetPhysicalIdentity: null }],
    ['logical fingerprint', { targetLogicalFingerprint: 'sha256:def' }],
    ['owned roles', { ownedRoles: ['app'] }],
    ['owned schemas', { ownedSchemas: [] }],
    ['effects', { changes: changes.slice(1) }],
  ])('binds the %s', (_label, change) => {
    expect(digest(change)).not.toBe(digest({}));
  });

  it('binds a set_password to its password source: a rotated Secret changes the digest', () => {
    const rotated = changes.map((c) =>
      c.kind === 'set_password' ? { ...c, password_source: 'app-secret:password:8' } : c,
    );
    expect(digest({ changes: rotated })).not.toBe(digest({}));
  });

  it('fails closed when a set_password has no password source', () => {
    expect(() =>
      changeDigest({ ...base, changes: [{ kind: 'set_password', name: 'app', password_source: '' }] }),
    ).toThrow(ChangeDigestError);
  });

  it('never binds anything but the source for passwords (no verifier field can enter)', () => {
    const withExtra = {
      kind: 'set_password',
      name: 'app',
      password_source: 'app-secret:password:7',
      verifier: 'SCRAM-SHA-256$4096:x$y:z',
    } as unknown as Change;
    expect(digest({ changes: [withExtra] })).toBe(
      digest({ changes: [{ kind: 'set_password', name: 'app', password_source: 'app-secret:password:7' }] }),
    );
  });
});
