// Renders the SQL every repository method runs, for the checked-in libs/catalog/queries/*.sql files:
// reviewers read SQL, not TypeScript. A test regenerates these texts and compares them with the files.

import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely';

import { DefaultPrivilegeRepository } from './default-privilege.repository.js';
import { DiscoveryRepository } from './discovery.repository.js';
import { FingerprintRepository } from './fingerprint.repository.js';
import { InventoryRepository } from './inventory.repository.js';
import { MembershipRepository } from './membership.repository.js';
import { ObjectAclRepository } from './object-acl.repository.js';
import type { PgCatalog } from './pg-catalog.tables.js';
import { PrivilegeRepository } from './privilege.repository.js';
import { ReviewFactsRepository } from './review-facts.repository.js';
import { RoleRepository } from './role.repository.js';
import { SchemaRepository } from './schema.repository.js';
import { ServerRepository } from './server.repository.js';

type Call = readonly [method: string, run: (db: Kysely<PgCatalog>) => Promise<unknown>];

const ROLES = ['app_reader'];
const SCHEMAS = ['app'];

/** Each repository file and the calls that exercise every query it can run. */
const REPOSITORIES: Readonly<Record<string, readonly Call[]>> = {
  'role.repository': [
    ['findRoles', (db) => new RoleRepository(db).findRoles(ROLES)],
    ['existingRoles', (db) => new RoleRepository(db).existingRoles(ROLES)],
    ['executor', (db) => new RoleRepository(db).executor().catch(() => null)],
  ],
  'membership.repository': [
    ['findMemberships (PostgreSQL 15)', (db) => new MembershipRepository(db).findMemberships(ROLES, 150000)],
    ['findMemberships (PostgreSQL 16+)', (db) => new MembershipRepository(db).findMemberships(ROLES, 160000)],
  ],
  'privilege.repository': [['reachable', (db) => new PrivilegeRepository(db).reachable(ROLES)]],
  'schema.repository': [['findSchemas', (db) => new SchemaRepository(db).findSchemas(SCHEMAS)]],
  'object-acl.repository': [
    ['relationGrants', (db) => new ObjectAclRepository(db).relationGrants(SCHEMAS, ROLES)],
    ['relationPublicRows', (db) => new ObjectAclRepository(db).relationPublicRows(SCHEMAS)],
    ['functionGrants', (db) => new ObjectAclRepository(db).functionGrants(SCHEMAS, ROLES)],
    ['functionPublicRows', (db) => new ObjectAclRepository(db).functionPublicRows(SCHEMAS)],
    ['typeGrants', (db) => new ObjectAclRepository(db).typeGrants(SCHEMAS, ROLES)],
    ['typePublicRows', (db) => new ObjectAclRepository(db).typePublicRows(SCHEMAS)],
    ['schemaGrants', (db) => new ObjectAclRepository(db).schemaGrants(SCHEMAS, ROLES)],
    ['schemaPublicRows', (db) => new ObjectAclRepository(db).schemaPublicRows(SCHEMAS)],
    ['databaseGrants', (db) => new ObjectAclRepository(db).databaseGrants(ROLES)],
    ['databasePublicRows', (db) => new ObjectAclRepository(db).databasePublicRows()],
  ],
  'default-privilege.repository': [
    ['schemaLayer', (db) => new DefaultPrivilegeRepository(db).schemaLayer(SCHEMAS)],
    [
      'globalLayer',
      (db) =>
        new DefaultPrivilegeRepository(db).globalLayer([
          { owner: 'app_owner', objtype: 'S', acldefault: 's' },
        ]),
    ],
  ],
  'discovery.repository': [
    ['roles', (db) => new DiscoveryRepository(db).roles()],
    ['schemas', (db) => new DiscoveryRepository(db).schemas()],
    ['defaultAclKeys', (db) => new DiscoveryRepository(db).defaultAclKeys()],
    ['canReadPasswords', (db) => new DiscoveryRepository(db).canReadPasswords()],
    ['rolesWithPassword', (db) => new DiscoveryRepository(db).rolesWithPassword(ROLES)],
    ['inexpressible', (db) => new DiscoveryRepository(db).inexpressible(ROLES)],
    [
      'membershipsWithoutSet (PostgreSQL 16+)',
      (db) => new DiscoveryRepository(db).membershipsWithoutSet(ROLES),
    ],
  ],
  'inventory.repository': [
    ['inventory', (db) => new InventoryRepository(db).inventory([{ kind: 'table', schema: 'app' }])],
    [
      'grantability',
      (db) => new InventoryRepository(db).grantability([{ oid: 16384, kind: 'table', privilege: 'SELECT' }]),
    ],
    [
      'functionSignatures',
      (db) =>
        new InventoryRepository(db).functionSignatures([
          { schema: 'app', declared: 'f(integer)', lookup: '"app"."f"(integer)', has_args: true },
        ]),
    ],
  ],
  'review-facts.repository': [
    ['executorEdges (PostgreSQL 15)', (db) => new ReviewFactsRepository(db).executorEdges(150000)],
    ['executorEdges (PostgreSQL 16+)', (db) => new ReviewFactsRepository(db).executorEdges(160000)],
    ['dropRoleFacts', (db) => new ReviewFactsRepository(db).dropRoleFacts(ROLES)],
  ],
  'fingerprint.repository': [
    [
      'parts',
      (db) =>
        new FingerprintRepository(db).parts({
          roles: ROLES,
          granted: ROLES,
          schemas: SCHEMAS,
          globalDefaultOwners: ['app_owner'],
        }),
    ],
    ['verifiers', (db) => new FingerprintRepository(db).verifiers(ROLES)],
  ],
  'server.repository': [
    ['server', (db) => new ServerRepository(db).server().catch(() => null)],
    ['systemIdentifier', (db) => new ServerRepository(db).systemIdentifier().catch(() => null)],
  ],
};

/** File name (without `.sql`) to file text: one `-- Class.method` header and its SQL per query. */
export async function renderQuerySnapshots(): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const [file, calls] of Object.entries(REPOSITORIES)) {
    const parts: string[] = [`-- ${file}: SQL run by each method (generated; see query-snapshots.ts)`];
    for (const [method, run] of calls) {
      const captured: string[] = [];
      const db = new Kysely<PgCatalog>({
        dialect: {
          createAdapter: () => new PostgresAdapter(),
          createDriver: () => new DummyDriver(),
          createIntrospector: (inner) => new PostgresIntrospector(inner),
          createQueryCompiler: () => new PostgresQueryCompiler(),
        },
        log: (event) => {
          if (event.level === 'query') captured.push(event.query.sql);
        },
      });
      await run(db);
      await db.destroy();
      parts.push(...captured.map((text) => `\n-- ${method}\n${normalise(text)};`));
    }
    files[file] = `${parts.join('\n')}\n`;
  }
  return files;
}

/** Strips trailing spaces and the template's common indentation so the files diff cleanly. */
function normalise(text: string): string {
  const lines = text.split('\n').map((line) => line.trimEnd());
  const indents = lines
    .slice(1)
    .filter((line) => line.trim() !== '')
    .map((line) => line.length - line.trimStart().length);
  const common = indents.length > 0 ? Math.min(...indents) : 0;
  return [lines[0]!.trim(), ...lines.slice(1).map((line) => line.slice(common))]
    .filter((line, i) => i === 0 || line !== '')
    .join('\n');
}
