// Table test: every change kind x reconciliation mode (engine notes 3.4, spec "Reconciliation mode semantics").
// One synthetic full diff holds each shape once, so context-dependent rules (new role, transfer) are exercised.

import type { Change } from '../model/change.js';
import type { ReconciliationMode } from '../model/vocabulary.js';
import { filterByMode } from './mode-filter.js';

const schemaScope = { type: 'schema', schema: 'moved' } as const;

/** [label, change, kept in authoritative, kept in adopt, kept in additive] */
const TABLE: readonly (readonly [string, Change, boolean, boolean, boolean])[] = [
  ['create_role', { kind: 'create_role', name: 'new', state: stateOf() }, true, true, true],
  ['create_schema', { kind: 'create_schema', name: 's', owner: 'o' }, true, true, true],
  ['alter_schema_owner', { kind: 'alter_schema_owner', name: 'moved', owner: 'o' }, true, true, false],
  [
    'ensure_schema_owner_privileges after a transfer',
    { kind: 'ensure_schema_owner_privileges', name: 'moved', owner: 'o', privileges: ['CREATE', 'USAGE'] },
    true,
    true,
    false,
  ],
  [
    'ensure_schema_owner_privileges without a transfer',
    { kind: 'ensure_schema_owner_privileges', name: 'kept', owner: 'o', privileges: ['CREATE'] },
    true,
    true,
    true,
  ],
  [
    'alter_role of an existing role',
    { kind: 'alter_role', name: 'old', attributes: [{ kind: 'login', value: true }] },
    true,
    true,
    false,
  ],
  [
    'alter_role config-only of a role created in this plan',
    { kind: 'alter_role', name: 'new', attributes: [{ kind: 'set_config', parameter: 'role', value: 'x' }] },
    true,
    true,
    true,
  ],
  [
    'alter_role config-only of an existing role',
    {
      kind: 'alter_role',
      name: 'old',
      attributes: [{ kind: 'set_config', parameter: 'work_mem', value: '1MB' }],
    },
    true,
    true,
    false,
  ],
  ['set_comment', { kind: 'set_comment', name: 'old', comment: 'c' }, true, true, false],
  [
    'grant',
    { kind: 'grant', role: 'r', privileges: ['SELECT'], object_type: 'table', name: 't', schema: 's' },
    true,
    true,
    true,
  ],
  [
    'revoke',
    {
      kind: 'revoke',
      role: 'r',
      privileges: ['SELECT'],
      object_type: 'table',
      name: 't',
      schema: 's',
      grantor: null,
    },
    true,
    true,
    false,
  ],
  [
    'set_default_privilege (global)',
    {
      kind: 'set_default_privilege',
      owner: 'o',
      scope: { type: 'global' },
      on_type: 'table',
      grantee: 'r',
      privileges: ['SELECT'],
    },
    true,
    true,
    true,
  ],
  [
    'set_default_privilege in a schema whose transfer is skipped',
    {
      kind: 'set_default_privilege',
      owner: 'o',
      scope: schemaScope,
      on_type: 'table',
      grantee: 'r',
      privileges: ['SELECT'],
    },
    true,
    true,
    false,
  ],
  [
    'revoke_default_privilege',
    {
      kind: 'revoke_default_privilege',
      owner: 'o',
      scope: { type: 'global' },
      on_type: 'table',
      grantee: 'r',
      privileges: ['SELECT'],
    },
    true,
    true,
    false,
  ],
  [
    'add_member',
    { kind: 'add_member', role: 'g', member: 'm', inherit: true, admin: false },
    true,
    true,
    true,
  ],
  ['remove_member', { kind: 'remove_member', role: 'g', member: 'm', grantor: null }, true, true, false],
  ['terminate_sessions', { kind: 'terminate_sessions', role: 'gone' }, true, false, false],
  ['reassign_owned', { kind: 'reassign_owned', from_role: 'gone', to_role: 'heir' }, true, false, false],
  ['drop_owned', { kind: 'drop_owned', role: 'gone' }, true, false, false],
  ['drop_role', { kind: 'drop_role', name: 'gone' }, true, false, false],
];

function stateOf() {
  return {
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
  };
}

const MODES: readonly [ReconciliationMode, number][] = [
  ['authoritative', 2],
  ['adopt', 3],
  ['additive', 4],
];

describe('reconciliation mode x change kind', () => {
  const all = TABLE.map((row) => row[1]);
  for (const [mode, column] of MODES) {
    const kept = new Set(filterByMode(all, mode));
    for (const row of TABLE) {
      const expected = row[column] as boolean;
      it(`${mode} ${expected ? 'keeps' : 'drops'} ${row[0]}`, () => {
        expect(kept.has(row[1])).toBe(expected);
      });
    }
  }

  it('additive keeps only the add_member of a flag-change pair', () => {
    const pair: Change[] = [
      { kind: 'remove_member', role: 'g', member: 'm', grantor: null },
      { kind: 'add_member', role: 'g', member: 'm', inherit: false, admin: false },
    ];
    expect(filterByMode(pair, 'additive')).toEqual([pair[1]]);
  });
});
