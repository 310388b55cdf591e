// The interpreter's PostgreSQL assumptions, one rule per test (engine notes 6.3): what a change does to
// the inspected state. The live differential check of these rules is libs/catalog's convergence suite.

import { catalogSnapshot, liveRole } from '../diff/test-support/builders.js';
import { applyChanges } from './apply-changes.js';

const inventory = ['a', 'b'].map((name) => ({ kind: 'table' as const, schema: 's', name, owner: 'o' }));

describe('applyChanges', () => {
  it('expands a `*` grant per inventory object of that type and schema', () => {
    const after = applyChanges(catalogSnapshot({ inventory }), [
      { kind: 'grant', role: 'r', privileges: ['SELECT'], object_type: 'table', name: '*', schema: 's' },
    ]);
    expect(after.grants.map((g) => [g.name, g.privileges])).toEqual([
      ['a', ['SELECT']],
      ['b', ['SELECT']],
    ]);
  });

  it('an ON ALL revoke hits every row under the (grantee, type, schema) prefix and deletes emptied keys', () => {
    const snapshot = catalogSnapshot({
      inventory,
      grants: [
        { grantee: 'r', object_type: 'table', schema: 's', name: 'a', privileges: ['SELECT', 'UPDATE'] },
        { grantee: 'r', object_type: 'table', schema: 's', name: 'b', privileges: ['UPDATE'] },
        { grantee: 'r', object_type: 'table', schema: 'other', name: 'c', privileges: ['UPDATE'] },
      ],
    });
    const after = applyChanges(snapshot, [
      {
        kind: 'revoke',
        role: 'r',
        privileges: ['UPDATE'],
        object_type: 'table',
        name: '*',
        schema: 's',
        grantor: null,
      },
    ]);
    expect(after.grants.map((g) => [g.schema, g.name, g.privileges])).toEqual([
      ['other', 'c', ['UPDATE']],
      ['s', 'a', ['SELECT']],
    ]);
  });

  it('an owner transfer folds the new owner explicit schema grant into the owner privileges', () => {
    const snapshot = catalogSnapshot({
      schemas: [{ name: 's', owner: 'y', owner_privileges: ['USAGE'] }],
      grants: [{ grantee: 'z', object_type: 'schema', schema: null, name: 's', privileges: ['CREATE'] }],
    });
    const after = applyChanges(snapshot, [{ kind: 'alter_schema_owner', name: 's', owner: 'z' }]);
    expect(after.schemas).toEqual([{ name: 's', owner: 'z', owner_privileges: ['CREATE', 'USAGE'] }]);
    expect(after.grants).toEqual([]);
  });

  it('a created role gets the built-in global PUBLIC defaults (EXECUTE on routines, USAGE on types)', () => {
    const after = applyChanges(catalogSnapshot(), [
      {
        kind: 'create_role',
        name: 'o',
        state: {
          login: false,
          superuser: false,
          createdb: false,
          createrole: false,
          inherit: true,
          replication: false,
          bypassrls: false,
          connection_limit: -1,
          comment: 'c',
          password_valid_until: null,
        },
      },
    ]);
    expect(after.roles).toEqual([liveRole('o', { comment: 'c' })]);
    expect(after.default_privileges.map((d) => [d.grantee, d.on_type, d.privileges])).toEqual([
      ['PUBLIC', 'function', ['EXECUTE']],
      ['PUBLIC', 'type', ['USAGE']],
    ]);
  });

  it('PG16 with a non-superuser CREATEROLE executor: the implicit self-grant edge is left out, as inspection does', () => {
    const snapshot = catalogSnapshot({
      server_version_num: 160004,
      executor: { role: 'exec', superuser: false, createrole: true, member_of: [] },
    });
    const after = applyChanges(snapshot, [
      {
        kind: 'create_role',
        name: 'n',
        state: {
          login: false,
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
    ]);
    expect(after.memberships).toEqual([]);
    expect(after.roles.map((role) => role.name)).toEqual(['n']);
  });

  it('remove_member with a grantor removes only that grantor row', () => {
    const snapshot = catalogSnapshot({
      memberships: [
        { role: 'g', member: 'm', inherit: true, admin: false, grantor: 'a' },
        { role: 'g', member: 'm', inherit: true, admin: false, grantor: 'b' },
      ],
    });
    const after = applyChanges(snapshot, [{ kind: 'remove_member', role: 'g', member: 'm', grantor: 'a' }]);
    expect(after.memberships.map((m) => m.grantor)).toEqual(['b']);
  });

  it('alter_role applies attributes and config set/reset; drop_role removes the role and everything keyed on it', () => {
    const snapshot = catalogSnapshot({
      roles: [liveRole('r', { config: { work_mem: '1MB' } }), liveRole('gone')],
      grants: [{ grantee: 'gone', object_type: 'schema', schema: null, name: 's', privileges: ['USAGE'] }],
      memberships: [{ role: 'r', member: 'gone', inherit: true, admin: false }],
    });
    const after = applyChanges(snapshot, [
      {
        kind: 'alter_role',
        name: 'r',
        attributes: [
          { kind: 'login', value: true },
          { kind: 'connection_limit', value: 2 },
          { kind: 'set_config', parameter: 'search_path', value: 's' },
          { kind: 'reset_config', parameter: 'work_mem' },
        ],
      },
      { kind: 'drop_role', name: 'gone' },
    ]);
    expect(after.roles).toEqual([
      liveRole('r', { login: true, connection_limit: 2, config: { search_path: 's' } }),
    ]);
    expect(after.existing_roles).toEqual(['r']);
    expect(after.grants).toEqual([]);
    expect(after.memberships).toEqual([]);
  });

  it('never mutates its input snapshot', () => {
    const snapshot = catalogSnapshot({ inventory });
    const before = JSON.stringify(snapshot);
    applyChanges(snapshot, [
      { kind: 'grant', role: 'r', privileges: ['SELECT'], object_type: 'table', name: '*', schema: 's' },
    ]);
    expect(JSON.stringify(snapshot)).toBe(before);
  });
});
