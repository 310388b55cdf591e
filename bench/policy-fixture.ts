// Synthetic policy and snapshot at a fraction of the spec's collection bounds, for the policy benchmark.
// Deterministic (no randomness): the same fraction always yields the same input.

import type { CatalogSnapshot, InventoryObject, PolicyContent, RoleEntry } from '@rolepolicy/policy';

/** The spec's collection bounds the benchmark targets at full size. */
export const BOUNDS = { roles: 1024, grants: 4096, memberships: 2048, defaultPrivileges: 512, schemas: 1024 };
/** Snapshot size at full size: schemas x relations per schema. */
export const SNAPSHOT = { schemas: 1000, relationsPerSchema: 50 };

const scaled = (bound: number, fraction: number): number => Math.max(2, Math.round(bound * fraction));
const role = (i: number): string => `r${i}`;
const schema = (i: number): string => `s${i}`;

/**
 * Policy content at `fraction` of every bound. `prefix` starts every role name (`<prefix>r0`,
 * `<prefix>app_owner`), so a benchmark that creates the roles on a shared server owns its names.
 */
export function policyAt(fraction: number, prefix = ''): PolicyContent {
  const role = (i: number): string => `${prefix}r${i}`;
  const owner = `${prefix}app_owner`;
  const roles = scaled(BOUNDS.roles, fraction);
  const schemas = scaled(BOUNDS.schemas, fraction);
  const half = Math.floor(roles / 2);
  const grantKinds = [
    (g: number) => ({ type: 'table' as const, schema: schema(g % schemas), name: '*' }),
    (g: number) => ({ type: 'table' as const, schema: schema(g % schemas), name: `t${g % 50}` }),
    (g: number) => ({ type: 'sequence' as const, schema: schema(g % schemas), name: '*' }),
    (g: number) => ({ type: 'schema' as const, name: schema(g % schemas) }),
  ];
  return {
    reconciliation_mode: 'authoritative',
    default_owner: owner,
    roles: [
      { name: owner, external: true },
      ...Array.from({ length: roles - 1 }, (_, i) => ({
        name: role(i),
        login: i % 4 === 0,
        comment: i % 8 === 0 ? `service ${i}` : null,
        config: i % 16 === 0 ? { search_path: `${schema(i % schemas)}, public` } : undefined,
      })),
    ],
    schemas: Array.from({ length: schemas }, (_, i) => ({ name: schema(i) })),
    grants: Array.from({ length: scaled(BOUNDS.grants, fraction) }, (_, g) => ({
      role: role(g % (roles - 1)),
      object: grantKinds[g % grantKinds.length]!(Math.floor(g / grantKinds.length)),
      privileges: g % 2 === 0 ? (['SELECT'] as const) : (['SELECT', 'INSERT', 'UPDATE'] as const),
    })).map((grant) => ({
      ...grant,
      privileges:
        grant.object.type === 'schema' || grant.object.type === 'sequence'
          ? ['USAGE' as const]
          : [...grant.privileges],
    })),
    // Members always have a higher index than the granted role, so the membership graph has no cycles.
    memberships: Array.from({ length: scaled(BOUNDS.memberships, fraction) }, (_, i) => ({
      role: role(i % half),
      members: [{ name: role(half + ((i * 31 + Math.floor(i / half)) % (roles - 1 - half))) }],
    })),
    default_privileges: Array.from({ length: scaled(BOUNDS.defaultPrivileges, fraction) }, (_, i) => ({
      owner: owner,
      schema: schema(i % schemas),
      grant: [{ on_type: 'table' as const, privileges: ['SELECT' as const], role: role(i % (roles - 1)) }],
    })),
  };
}

/** A live snapshot at `fraction` of 1,000 schemas x 50 relations, with drift on half the roles. */
export function snapshotAt(fraction: number): CatalogSnapshot {
  const schemas = scaled(SNAPSHOT.schemas, fraction);
  const roles = scaled(BOUNDS.roles, fraction) - 1;
  const inventory: InventoryObject[] = [];
  for (let s = 0; s < schemas; s++) {
    for (let t = 0; t < SNAPSHOT.relationsPerSchema; t++) {
      inventory.push({ kind: 'table', schema: schema(s), name: `t${t}`, owner: 'app_owner' });
    }
  }
  const liveRoles: RoleEntry[] = Array.from({ length: Math.floor(roles / 2) }, (_, i) => ({
    name: role(i),
    state: {
      login: i % 3 === 0,
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
    },
  }));
  return {
    server_version_num: 160004,
    current_database: 'bench',
    executor: { role: 'postgres', superuser: true, createrole: true, member_of: [] },
    identity: { physical: '7412330000000000001', physical_available: true, logical_fingerprint: null },
    roles: liveRoles,
    schemas: Array.from({ length: schemas }, (_, i) => ({
      name: schema(i),
      owner: 'app_owner',
      owner_privileges: ['CREATE', 'USAGE'],
    })),
    grants: liveRoles.map((r, i) => ({
      grantee: r.name,
      object_type: 'table',
      schema: schema(i % schemas),
      name: `t${i % SNAPSHOT.relationsPerSchema}`,
      privileges: ['SELECT', 'DELETE'],
    })),
    default_privileges: [],
    memberships: [],
    inventory,
    unsatisfiable_wildcards: [],
    existing_roles: ['app_owner', ...liveRoles.map((r) => r.name)],
    function_signatures: [],
  };
}
