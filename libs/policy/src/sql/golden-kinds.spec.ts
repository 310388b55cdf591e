// Golden SQL for one hand-built change of every kind (and the variants the realistic plan does not produce:
// alter_role with config, foreign grantors, type and routine targets), on PG15 and PG16 syntax.
// Regenerate after an intended change with UPDATE_GOLDEN=1 and review the diff of the .sql files.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Change } from '../model/change.js';
import type { InventoryObject } from '../model/snapshot.js';
import { scramSha256Verifier } from '../password/scram.js';
import { renderSql } from './render.js';
import { loadParser, parseStatements } from './test-support/pg-parse.js';

const GOLDEN_DIR = fileURLToPath(new URL('./__golden__/', import.meta.url));

const CHANGES: readonly Change[] = [
  {
    kind: 'create_role',
    name: 'svc',
    state: {
      login: true,
      superuser: false,
      createdb: true,
      createrole: false,
      inherit: false,
      replication: false,
      bypassrls: true,
      connection_limit: 3,
      comment: "Service's account",
      password_valid_until: '2030-06-30T12:00:00Z',
    },
  },
  { kind: 'create_schema', name: 'sales', owner: 'owner' },
  { kind: 'create_schema', name: 'scratch', owner: null },
  {
    kind: 'alter_role',
    name: 'svc',
    attributes: [
      { kind: 'createdb', value: false },
      { kind: 'connection_limit', value: -1 },
      { kind: 'valid_until', value: null },
      { kind: 'set_config', parameter: 'search_path', value: 'sales, "My Schema", "$user"' },
      { kind: 'set_config', parameter: 'app.tenant', value: 'acme' },
      { kind: 'reset_config', parameter: 'work_mem' },
    ],
  },
  { kind: 'set_comment', name: 'svc', comment: null },
  { kind: 'alter_schema_owner', name: 'sales', owner: 'new_owner' },
  {
    kind: 'ensure_schema_owner_privileges',
    name: 'sales',
    owner: 'new_owner',
    privileges: ['USAGE', 'CREATE'],
  },
  { kind: 'set_password', name: 'svc', password_source: 'svc-secret:password:3' },
  {
    kind: 'grant',
    role: 'svc',
    privileges: ['CONNECT'],
    object_type: 'database',
    name: 'appdb',
    schema: null,
  },
  {
    kind: 'grant',
    role: 'PUBLIC',
    privileges: ['USAGE'],
    object_type: 'schema',
    name: 'sales',
    schema: null,
  },
  {
    kind: 'grant',
    role: 'svc',
    privileges: ['SELECT', 'UPDATE'],
    object_type: 'table',
    name: '*',
    schema: 'sales',
  },
  {
    kind: 'grant',
    role: 'svc',
    privileges: ['SELECT'],
    object_type: 'materialized_view',
    name: '*',
    schema: 'sales',
  },
  { kind: 'grant', role: 'svc', privileges: ['USAGE'], object_type: 'type', name: '*', schema: 'sales' },
  {
    kind: 'grant',
    role: 'svc',
    privileges: ['USAGE'],
    object_type: 'sequence',
    name: 'orders_id_seq',
    schema: 'sales',
  },
  {
    kind: 'grant',
    role: 'svc',
    privileges: ['EXECUTE'],
    object_type: 'function',
    name: 'close_order(p_id bigint, OUT closed boolean)',
    schema: 'sales',
  },
  { kind: 'remove_member', role: 'readers', member: 'svc', grantor: 'admin' },
  { kind: 'remove_member', role: 'writers', member: 'svc', grantor: null },
  { kind: 'add_member', role: 'readers', member: 'svc', inherit: false, admin: true },
  {
    kind: 'revoke',
    role: 'svc',
    privileges: ['DELETE'],
    object_type: 'view',
    name: 'v_orders',
    schema: 'sales',
    grantor: 'admin',
  },
  {
    kind: 'revoke',
    role: 'svc',
    privileges: ['USAGE'],
    object_type: 'sequence',
    name: '*',
    schema: 'sales',
    grantor: null,
  },
  {
    kind: 'revoke',
    role: 'svc',
    privileges: ['EXECUTE'],
    object_type: 'function',
    name: '*',
    schema: 'sales',
    grantor: null,
  },
  {
    kind: 'set_default_privilege',
    owner: 'owner',
    scope: { type: 'schema', schema: 'sales' },
    on_type: 'type',
    grantee: 'svc',
    privileges: ['USAGE'],
  },
  {
    kind: 'revoke_default_privilege',
    owner: 'owner',
    scope: { type: 'global' },
    on_type: 'schema',
    grantee: 'svc',
    privileges: ['CREATE', 'USAGE'],
  },
  { kind: 'terminate_sessions', role: 'old' },
  { kind: 'reassign_owned', from_role: 'old', to_role: 'owner' },
  { kind: 'drop_owned', role: 'old' },
  { kind: 'drop_role', name: 'old' },
];

const INVENTORY: readonly InventoryObject[] = [
  { kind: 'table', schema: 'sales', name: 'orders', owner: 'owner' },
  { kind: 'table', schema: 'sales', name: 'Order Lines', owner: 'owner' },
  { kind: 'view', schema: 'sales', name: 'v_orders', owner: 'owner' },
  { kind: 'materialized_view', schema: 'sales', name: 'mv_totals', owner: 'owner' },
  { kind: 'type', schema: 'sales', name: 'order_state', owner: 'owner' },
  { kind: 'sequence', schema: 'sales', name: 'orders_id_seq', owner: 'owner' },
];

beforeAll(async () => {
  await loadParser();
});

describe('golden SQL for every change kind', () => {
  it.each([
    ['change-kinds-pg15.sql', 150020],
    ['change-kinds-pg16.sql', 160004],
  ])('%s matches the hand-built change list', (file, serverVersionNum) => {
    const rendered = renderSql(CHANGES, {
      serverVersionNum,
      inventory: INVENTORY,
      passwords: { svc: scramSha256Verifier('golden', Buffer.alloc(16, 0x2a)) },
      executorRole: 'rolepolicy',
    });
    // The golden holds the redacted preview followed by the executable SQL, so both are reviewed.
    const text = `-- redacted\n${rendered.redactedSql}\n-- executable\n${rendered.sql}\n`;
    const path = `${GOLDEN_DIR}${file}`;
    if (process.env['UPDATE_GOLDEN'] === '1') writeFileSync(path, text);
    expect(text).toBe(readFileSync(path, 'utf8'));
    expect(parseStatements(rendered.sql)).toHaveLength(rendered.statementCount);
    expect(new Set(rendered.statements.flatMap((s) => s.changeIndices))).toEqual(
      new Set(CHANGES.map((_, i) => i)),
    );
  });
});
