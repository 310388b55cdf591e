// The catalog read of `rolepolicy generate`: discovery (roles, schemas, default-ACL patterns) and the
// ordinary inspection of the scope a policy naming all of them would have, in ONE REPEATABLE READ READ ONLY
// transaction, plus the full inventory (for `*` collapsing), password presence and what a policy cannot state.

import type { Kysely } from 'kysely';

import {
  selectRoles,
  type CatalogSnapshot,
  type DefaultPrivilegeScopeKey,
  type GenerateSource,
  type InventoryKind,
  type ManagedScope,
  type ObjectType,
  type PublicObjectScope,
  PRIVILEGES,
} from '@rolepolicy/policy';

import { DEFAULT_ACL_LETTERS } from './derive-state.js';
import { snapshotInventory } from './derive-wildcards.js';
import { DiscoveryRepository } from './discovery.repository.js';
import { readScope, type TargetAddress } from './inspect.js';
import { InventoryRepository } from './inventory.repository.js';
import type { PgCatalog } from './pg-catalog.tables.js';

/** The inventory kinds listed for every schema. */
const KINDS: readonly InventoryKind[] = [
  'table',
  'view',
  'materialized_view',
  'sequence',
  'function',
  'type',
];

/** Which roles to describe: globs over role names (`*`, `?`). */
export interface GenerateSelection {
  readonly roles: readonly string[];
  readonly exclude: readonly string[];
}

function onTypeOf(letter: string): ObjectType | null {
  for (const [type, letters] of Object.entries(DEFAULT_ACL_LETTERS)) {
    if (letters?.stored === letter) return type as ObjectType;
  }
  return null;
}

/** PUBLIC rules naming every object of every schema and the database, with every privilege. */
function publicEverywhere(schemas: readonly string[]): PublicObjectScope[] {
  const all = [...PRIVILEGES];
  return [
    { object_type: 'database', schema: null, name: null, privileges: all },
    ...schemas.flatMap((schema): PublicObjectScope[] => [
      { object_type: 'schema', schema: null, name: schema, privileges: all },
      ...KINDS.map((kind) => ({ object_type: kind, schema, name: '*', privileges: all })),
    ]),
  ];
}

/**
 * The scope a policy naming every selected role, every schema, PUBLIC on everything and every stored
 * default-ACL pattern would have.
 */
function discoveredScope(
  selected: readonly string[],
  predefined: readonly string[],
  schemas: readonly string[],
  defaults: readonly DefaultPrivilegeScopeKey[],
): ManagedScope {
  return {
    roles: selected,
    membership_grantors: predefined,
    schemas,
    owned_schemas: [],
    wildcards: [],
    public_objects: publicEverywhere(schemas),
    default_privilege_scopes: defaults,
    include_database_privileges: true,
    database_targets: [],
    function_signatures: [],
  };
}

/**
 * Reads everything `generate` needs in one transaction.
 * @example `const source = await readForGenerate(db, { roles: ['app_*'], exclude: [] }, target);`
 */
export async function readForGenerate(
  db: Kysely<PgCatalog>,
  selection: GenerateSelection,
  target: TargetAddress | null,
): Promise<GenerateSource> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (trx) => {
      const discovery = new DiscoveryRepository(trx);
      const roles = await discovery.roles();
      const { selected, left_out } = selectRoles(roles, selection.roles, selection.exclude);
      const predefined = roles.filter((role) => role.name.startsWith('pg_')).map((role) => role.name);
      const schemas = await discovery.schemas();
      const defaults: DefaultPrivilegeScopeKey[] = [];
      for (const key of await discovery.defaultAclKeys()) {
        const onType = onTypeOf(key.objtype);
        if (onType === null) continue;
        defaults.push({
          owner: key.owner,
          scope: key.schema === null ? { type: 'global' } : { type: 'schema', schema: key.schema },
          on_type: onType,
          public_privileges: [...PRIVILEGES],
        });
      }
      const scope = discoveredScope(selected, predefined, schemas, defaults);
      const snapshot: CatalogSnapshot = await readScope(trx, scope, target);
      const inventoryRows =
        schemas.length > 0
          ? await new InventoryRepository(trx).inventory(
              schemas.flatMap((schema) => KINDS.map((kind) => ({ kind, schema }))),
            )
          : [];
      const passwordRoles =
        selected.length === 0
          ? []
          : (await discovery.canReadPasswords())
            ? await discovery.rolesWithPassword(selected)
            : null;
      const inexpressible =
        selected.length === 0
          ? []
          : [
              ...(await discovery.inexpressible(selected)),
              ...(snapshot.server_version_num >= 160000
                ? await discovery.membershipsWithoutSet(selected)
                : []),
            ];
      return {
        snapshot: { ...snapshot, inventory: snapshotInventory(inventoryRows, snapshot.inventory) },
        selected_roles: selected,
        left_out,
        password_roles: passwordRoles,
        inexpressible,
        global_default_pairs: defaults.flatMap((key) =>
          key.scope.type === 'global' ? [{ owner: key.owner, on_type: key.on_type }] : [],
        ),
      };
    });
}
