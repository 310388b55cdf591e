// The fleet benchmark's policy (one per database) and the catalog it meets, shared with the in-process
// benchmarks that measure one policy's share of the fleet's CPU (review artifact, sealed reads).
import type { CatalogSnapshot } from '@rolepolicy/policy';

/** The tables and view every fleet database starts with. */
export const FLEET_TEMPLATE_SQL = `CREATE SCHEMA orders; CREATE TABLE orders.items (id int); CREATE TABLE orders.lines (id int);
CREATE SCHEMA billing; CREATE TABLE billing.invoices (id int); CREATE VIEW billing.open AS SELECT id FROM billing.invoices;`;

/** The small policy of database `database` with role prefix `p`. */
export function smallPolicy(p: string, database: string, secret: string): Record<string, unknown> {
  return {
    connection: { secretRef: { name: secret } },
    mode: 'apply',
    approval: 'auto',
    role_pattern: `${p}{schema}_{profile}`,
    profiles: {
      viewer: {
        grants: [
          { object: { type: 'schema' }, privileges: ['USAGE'] },
          { object: { type: 'table', name: '*' }, privileges: ['SELECT'] },
        ],
      },
      editor: {
        grants: [
          { object: { type: 'schema' }, privileges: ['USAGE'] },
          { object: { type: 'table', name: '*' }, privileges: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'] },
        ],
      },
    },
    schemas: [
      { name: 'orders', profiles: ['viewer', 'editor'] },
      { name: 'billing', profiles: ['viewer'] },
    ],
    roles: [{ name: `${p}app`, login: true }, { name: `${p}reporting` }],
    grants: [
      { role: `${p}app`, object: { type: 'database', name: database }, privileges: ['CONNECT'] },
      { role: `${p}reporting`, object: { type: 'database', name: database }, privileges: ['CONNECT'] },
    ],
    memberships: [
      { role: `${p}orders_editor`, members: [{ name: `${p}app` }] },
      { role: `${p}billing_viewer`, members: [{ name: `${p}reporting` }] },
    ],
  };
}

/**
 * What the inspection of a fresh fleet database finds (the template's schemas and relations, none of the
 * policy's roles yet): the snapshot the first plan of each fleet policy is computed from.
 */
export function freshFleetSnapshot(database: string): CatalogSnapshot {
  return {
    server_version_num: 160004,
    current_database: database,
    executor: { role: 'postgres', superuser: true, createrole: true, member_of: [] },
    identity: { physical: '7412330000000000001', physical_available: true, logical_fingerprint: null },
    roles: [],
    schemas: ['billing', 'orders'].map((name) => ({
      name,
      owner: 'postgres',
      owner_privileges: ['CREATE', 'USAGE'],
    })),
    grants: [],
    default_privileges: [],
    memberships: [],
    inventory: [
      { kind: 'table', schema: 'billing', name: 'invoices', owner: 'postgres' },
      { kind: 'view', schema: 'billing', name: 'open', owner: 'postgres' },
      { kind: 'table', schema: 'orders', name: 'items', owner: 'postgres' },
      { kind: 'table', schema: 'orders', name: 'lines', owner: 'postgres' },
    ],
    unsatisfiable_wildcards: [],
    existing_roles: [],
    function_signatures: [],
  };
}
