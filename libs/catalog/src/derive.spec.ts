// Pure derivation rules of inspection (no server): PG16 membership rows, ACL grouping, PUBLIC narrowing,
// default-privilege scoping and rolconfig parsing, named after the rules they implement (docs/catalog.md).

import type { ExecutorIdentity } from '@rolepolicy/policy';

import { groupAclRows, narrowPublicRows } from './derive-grants.js';
import { deriveDefaultPrivileges, deriveMemberships } from './derive-state.js';
import type { MembershipRow } from './membership.repository.js';
import type { AclRow } from './object-acl.repository.js';
import { parseRoleConfig } from './role-config.js';

const executor: ExecutorIdentity = { role: 'exec', superuser: false, createrole: true, member_of: [] };
const edge = (partial: Partial<MembershipRow>): MembershipRow => ({
  role: 'g',
  member: 'm',
  inherit: true,
  admin: false,
  grantor: 'postgres',
  grantor_is_bootstrap: true,
  ...partial,
});
const acl = (partial: Partial<AclRow>): AclRow => ({
  kind: 'r',
  schema: 's',
  name: 't',
  owner: 'owner',
  grantee: 'reader',
  grantor: 'owner',
  privilege: 'SELECT',
  ...partial,
});

describe('memberships (engine notes 2.3)', () => {
  it('PG16 keeps one edge per grantor row, each with its own options (REVOKE ... GRANTED BY removes one row)', () => {
    const edges = deriveMemberships(
      [
        edge({ grantor: 'b', grantor_is_bootstrap: false, admin: true }),
        edge({ grantor: 'a', grantor_is_bootstrap: false, inherit: false }),
        edge({}),
      ],
      executor,
      160000,
    );
    expect(edges).toEqual([
      { role: 'g', member: 'm', inherit: true, admin: false, grantor: null },
      { role: 'g', member: 'm', inherit: false, admin: false, grantor: 'a' },
      { role: 'g', member: 'm', inherit: true, admin: true, grantor: 'b' },
    ]);
  });

  it('the bootstrap superuser as grantor is reported as null', () => {
    expect(deriveMemberships([edge({})], executor, 150000)[0]!.grantor).toBeNull();
  });

  it('the PG16 CREATEROLE self-grant (created role -> executor, ADMIN, by the bootstrap superuser) is unmanaged', () => {
    expect(deriveMemberships([edge({ member: 'exec', admin: true })], executor, 160000)).toEqual([]);
    expect(
      deriveMemberships([edge({ member: 'exec', admin: true })], { ...executor, superuser: true }, 160000),
    ).toHaveLength(1);
    // PostgreSQL 15 records no such edge: an ADMIN grant to the executor there is a real, declared edge.
    expect(deriveMemberships([edge({ member: 'exec', admin: true })], executor, 150000)).toHaveLength(1);
  });
});

describe('object grants (engine notes 2.5)', () => {
  it('rows group per (target, grantee); privileges canonical; unknown privileges such as MAINTAIN ignored', () => {
    const grants = groupAclRows([
      acl({ privilege: 'UPDATE' }),
      acl({ privilege: 'MAINTAIN' }),
      acl({ privilege: 'SELECT' }),
      acl({ kind: 'm', name: 'mv' }),
    ]);
    expect(grants).toEqual([
      {
        object_type: 'materialized_view',
        schema: 's',
        name: 'mv',
        grantee: 'reader',
        privileges: ['SELECT'],
      },
      { object_type: 'table', schema: 's', name: 't', grantee: 'reader', privileges: ['SELECT', 'UPDATE'] },
    ]);
  });

  it('a grantor is kept only when every row shares one grantor other than the owner', () => {
    expect(
      groupAclRows([acl({ grantor: 'delegate' }), acl({ grantor: 'delegate', privilege: 'INSERT' })])[0],
    ).toMatchObject({ grantor: 'delegate' });
    expect(groupAclRows([acl({ grantor: 'delegate' }), acl({ privilege: 'INSERT' })])[0]).not.toHaveProperty(
      'grantor',
    );
  });

  it('PUBLIC rows survive only for a declared PUBLIC rule and the privileges it names', () => {
    const rows = [
      acl({ kind: 'function', name: 'f(p_id integer)', grantee: 'PUBLIC', privilege: 'EXECUTE' }),
      acl({ kind: 'function', name: 'g(x text)', grantee: 'PUBLIC', privilege: 'EXECUTE' }),
      acl({ kind: 'type', name: 'ty', grantee: 'PUBLIC', privilege: 'USAGE' }),
    ];
    const kept = narrowPublicRows(
      rows,
      [{ object_type: 'function', schema: 's', name: 'f(integer)', privileges: ['EXECUTE'] }],
      [{ schema: 's', declared: 'f(integer)', identity: 'f(p_id integer)' }],
    );
    expect(kept.map((row) => row.name)).toEqual(['f(p_id integer)']);
  });
});

describe('default privileges (engine notes 2.7)', () => {
  const managed = new Set(['reader']);
  it('schema layer keeps managed grantees and PUBLIC only for declared patterns; global rows only for declared pairs', () => {
    const entries = deriveDefaultPrivileges(
      [
        { owner: 'o', schema: 's', objtype: 'r', grantee: 'reader', privilege: 'SELECT' },
        { owner: 'o', schema: 's', objtype: 'r', grantee: 'stranger', privilege: 'SELECT' },
        { owner: 'o', schema: 's', objtype: 'r', grantee: 'PUBLIC', privilege: 'SELECT' },
        { owner: 'o', schema: null, objtype: 'f', grantee: 'PUBLIC', privilege: 'EXECUTE' },
        { owner: 'other', schema: null, objtype: 'f', grantee: 'reader', privilege: 'EXECUTE' },
      ],
      managed,
      [{ owner: 'o', scope: { type: 'global' }, on_type: 'function', public_privileges: ['EXECUTE'] }],
    );
    expect(entries).toEqual([
      {
        owner: 'o',
        scope: { type: 'global' },
        on_type: 'function',
        grantee: 'PUBLIC',
        privileges: ['EXECUTE'],
      },
      {
        owner: 'o',
        scope: { type: 'schema', schema: 's' },
        on_type: 'table',
        grantee: 'reader',
        privileges: ['SELECT'],
      },
    ]);
  });
});

describe('role config (engine notes 2.2)', () => {
  it('splits on the first =, lowercases keys and canonicalises list GUCs', () => {
    expect(
      parseRoleConfig([
        'Work_Mem=4MB',
        'app.x=a=b',
        'search_path=a, "My Schema", "$user"',
        'search_path_x=keep',
      ]),
    ).toEqual({
      'app.x': 'a=b',
      search_path: 'a, "My Schema", "$user"',
      search_path_x: 'keep',
      work_mem: '4MB',
    });
  });

  it("a single quoted element with a comma stays one element ('a, b' stores one schema name)", () => {
    expect(parseRoleConfig(['search_path="a, b"'])).toEqual({ search_path: '"a, b"' });
  });
});
