// Golden SQL for a realistic policy (three schemas x editor/viewer profiles, one-off roles, a retirement,
// default privileges, memberships, a password) through expandPolicy + computePlan + renderSql, on PG15 and PG16.
// Regenerate after an intended change with UPDATE_GOLDEN=1 and review the diff of the .sql files.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expandPolicy } from '../expansion/index.js';
import type { PolicyContent } from '../model/content.js';
import type { CatalogSnapshot, InventoryObject } from '../model/snapshot.js';
import { computePlan } from '../plan/index.js';
import { scramSha256Verifier } from '../password/scram.js';
import { renderSql } from './render.js';
import { loadParser, parseStatements } from './test-support/pg-parse.js';

const GOLDEN_DIR = fileURLToPath(new URL('./__golden__/', import.meta.url));

const POLICY: PolicyContent = {
  reconciliation_mode: 'authoritative',
  default_owner: 'app_owner',
  profiles: {
    editor: {
      grants: [
        { object: { type: 'schema' }, privileges: ['USAGE'] },
        { object: { type: 'table', name: '*' }, privileges: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'] },
        { object: { type: 'sequence', name: '*' }, privileges: ['USAGE', 'SELECT'] },
        { object: { type: 'function', name: '*' }, privileges: ['EXECUTE'] },
      ],
      default_privileges: [
        { on_type: 'table', privileges: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'] },
        { on_type: 'sequence', privileges: ['USAGE', 'SELECT'] },
        { on_type: 'function', privileges: ['EXECUTE'] },
      ],
    },
    viewer: {
      grants: [
        { object: { type: 'schema' }, privileges: ['USAGE'] },
        { object: { type: 'table', name: '*' }, privileges: ['SELECT'] },
        { object: { type: 'view', name: '*' }, privileges: ['SELECT'] },
      ],
      default_privileges: [{ on_type: 'table', privileges: ['SELECT'] }],
    },
  },
  schemas: [
    { name: 'inventory', profiles: ['editor', 'viewer'] },
    { name: 'orders', profiles: ['editor', 'viewer'] },
    {
      name: 'billing',
      owner: 'billing_owner',
      profiles: ['editor', 'viewer'],
      role_pattern: 'fin_{profile}',
    },
  ],
  roles: [
    { name: 'app_owner', external: true },
    { name: 'billing_owner', login: false, comment: 'Owns the billing schema' },
    {
      name: 'app',
      login: true,
      connection_limit: 20,
      comment: "Application's service account",
      config: { search_path: 'orders, inventory, "$user"', statement_timeout: '30s' },
      password: { secretRef: { name: 'app-credentials' }, secretKey: 'password' },
    },
    { name: 'reporting', login: true, password_valid_until: '2030-01-01T00:00:00Z' },
  ],
  grants: [
    { role: 'app', object: { type: 'database', name: 'appdb' }, privileges: ['CONNECT', 'TEMPORARY'] },
    { role: 'reporting', object: { type: 'database', name: 'appdb' }, privileges: ['CONNECT'] },
    {
      role: 'PUBLIC',
      object: { type: 'schema', name: 'inventory' },
      privileges: ['USAGE'],
      ensure: 'absent',
    },
  ],
  default_privileges: [
    {
      owner: 'app_owner',
      scope: { type: 'global' },
      grant: [{ on_type: 'function', privileges: ['EXECUTE'], role: 'PUBLIC', ensure: 'absent' }],
    },
  ],
  memberships: [
    { role: 'orders-editor', members: [{ name: 'app' }] },
    { role: 'inventory-editor', members: [{ name: 'app', inherit: false }] },
    { role: 'inventory-viewer', members: [{ name: 'reporting' }, { name: 'fin_viewer', admin: true }] },
  ],
  retirements: [
    { role: 'legacy_app', reassign_owned_to: 'app_owner', drop_owned: true, terminate_sessions: true },
  ],
};

const inv = (kind: InventoryObject['kind'], name: string): InventoryObject => ({
  kind,
  schema: 'inventory',
  name,
  owner: 'app_owner',
});

function snapshot(serverVersionNum: number): CatalogSnapshot {
  const roleState = (login: boolean) => ({
    login,
    superuser: false,
    createdb: false,
    createrole: false,
    inherit: true,
    replication: false,
    bypassrls: false,
    connection_limit: -1,
    comment: null,
    password_valid_until: null,
    config: {},
  });
  return {
    server_version_num: serverVersionNum,
    current_database: 'appdb',
    executor: { role: 'postgres', superuser: true, createrole: true, member_of: [] },
    identity: { physical: '7412330000000000001', physical_available: true, logical_fingerprint: null },
    roles: [{ name: 'legacy_app', state: roleState(true) }],
    schemas: [{ name: 'inventory', owner: 'app_owner', owner_privileges: ['CREATE', 'USAGE'] }],
    grants: [
      {
        grantee: 'PUBLIC',
        object_type: 'schema',
        schema: null,
        name: 'inventory',
        privileges: ['USAGE'],
      },
    ],
    default_privileges: [
      {
        owner: 'app_owner',
        scope: { type: 'global' },
        on_type: 'function',
        grantee: 'PUBLIC',
        privileges: ['EXECUTE'],
      },
    ],
    memberships: [],
    inventory: [
      inv('table', 'items'),
      inv('table', 'stock_levels'),
      inv('view', 'low_stock'),
      inv('materialized_view', 'daily_totals'),
      inv('sequence', 'items_id_seq'),
      inv('function', 'restock(p_item integer, p_qty integer)'),
    ],
    unsatisfiable_wildcards: [],
    existing_roles: ['app_owner', 'legacy_app'],
    function_signatures: [],
  };
}

/**
 * PostgreSQL < 16 has no per-membership inherit, and a declared `inherit: false` that differs from the
 * member's role inherit is a server_compatibility blocker there: the PG15 golden declares the edge plainly.
 */
function policyFor(serverVersionNum: number): PolicyContent {
  if (serverVersionNum >= 160000) return POLICY;
  return {
    ...POLICY,
    memberships: POLICY.memberships!.map((m) => ({
      ...m,
      members: m.members.map(({ inherit: _inherit, ...member }) => member),
    })),
  };
}

function renderGolden(serverVersionNum: number): string {
  const expanded = expandPolicy(policyFor(serverVersionNum), { policyName: 'shop' });
  if (!expanded.ok) throw new Error(JSON.stringify(expanded.errors));
  const snap = snapshot(serverVersionNum);
  const plan = computePlan({
    desired: expanded.desired,
    snapshot: snap,
    mode: 'authoritative',
    passwordSources: { app: 'app-credentials:password:42' },
    appliedPasswordSourceVersions: {},
    allowSchemaOwnerTransfers: false,
  });
  expect(plan.blockers).toEqual([]);
  const salt = Buffer.from('golden-fixed-salt'.slice(0, 16), 'utf8');
  const rendered = renderSql(plan.changes, {
    serverVersionNum,
    inventory: snap.inventory,
    passwords: { app: scramSha256Verifier('golden password', salt) },
  });
  return `${rendered.sql}\n`;
}

function checkGolden(file: string, actual: string): void {
  const path = `${GOLDEN_DIR}${file}`;
  if (process.env['UPDATE_GOLDEN'] === '1') writeFileSync(path, actual);
  expect(actual).toBe(readFileSync(path, 'utf8'));
}

beforeAll(async () => {
  await loadParser();
});

describe('golden SQL for a realistic policy', () => {
  it.each([
    ['realistic-pg15.sql', 150020],
    ['realistic-pg16.sql', 160004],
  ])('%s matches the plan rendered through expandPolicy + computePlan + renderSql', (file, version) => {
    const sql = renderGolden(version);
    checkGolden(file, sql);
    // Every golden statement is valid PostgreSQL, one statement per line.
    expect(parseStatements(sql)).toHaveLength(sql.trimEnd().split('\n').length);
  });

  it('never uses ALL TABLES IN SCHEMA and differs between versions only in membership syntax', () => {
    const pg15 = renderGolden(150020).split('\n');
    const pg16 = renderGolden(160004).split('\n');
    expect(pg15.join('\n')).not.toContain('ALL TABLES');
    expect(pg15).toHaveLength(pg16.length);
    const differing = pg15.flatMap((line, i) => (line === pg16[i] ? [] : [[line, pg16[i]]]));
    expect(differing.length).toBeGreaterThan(0);
    for (const [a, b] of differing) {
      expect(a).toMatch(/^GRANT "[^"]+" TO "[^"]+"/);
      expect(b).toMatch(/ WITH INHERIT (TRUE|FALSE)/);
    }
  });
});
