// The catalog fingerprint on the real PostgreSQL: random drift in the managed scope always changes it (the
// property the planner's no-op shortcut rests on), it is stable while nothing changes, and the conditional
// inspection answers `unchanged` only for the fingerprint of the state it reads.

import fc from 'fast-check';
import { sql } from 'kysely';
import {
  createPostgresSandbox,
  postgresTargetLabel,
  postgresTargets,
  sandboxId,
  type PostgresSandbox,
} from '@rolepolicy/testing';
import type { ManagedScope } from '@rolepolicy/policy';

import { openConnection, type CatalogConnection } from './connection.js';
import { inspectUnlessUnchanged, readFingerprint } from './fingerprint.js';
import { inspect } from './inspect.js';
import { dropRolesWithPrefix, runSql, scopeOf } from './test-support/scope.js';

/** Drift steps per run: every one must move the fingerprint. */
const RUNS = Number(process.env['FINGERPRINT_RUNS'] ?? 100);

/** Grants when the (object, privilege, grantee) entry is absent from the effective ACL, revokes when present. */
const TOGGLE_ACL = `
CREATE FUNCTION rp_toggle_acl(kind text, obj text, priv text, grantee text) RETURNS void LANGUAGE plpgsql AS $f$
DECLARE acl aclitem[]; who oid; target text; present boolean;
BEGIN
  who := CASE WHEN grantee = 'PUBLIC' THEN 0 ELSE grantee::regrole::oid END;
  CASE kind
    WHEN 'table' THEN SELECT COALESCE(relacl, acldefault('r', relowner)) INTO acl FROM pg_class WHERE oid = obj::regclass;
      target := 'TABLE ' || obj;
    WHEN 'sequence' THEN SELECT COALESCE(relacl, acldefault('s', relowner)) INTO acl FROM pg_class WHERE oid = obj::regclass;
      target := 'SEQUENCE ' || obj;
    WHEN 'function' THEN SELECT COALESCE(proacl, acldefault('f', proowner)) INTO acl FROM pg_proc WHERE oid = obj::regprocedure;
      target := 'FUNCTION ' || obj;
    WHEN 'type' THEN SELECT COALESCE(typacl, acldefault('T', typowner)) INTO acl FROM pg_type WHERE oid = obj::regtype;
      target := 'TYPE ' || obj;
    WHEN 'schema' THEN SELECT COALESCE(nspacl, acldefault('n', nspowner)) INTO acl FROM pg_namespace WHERE nspname = obj;
      target := 'SCHEMA ' || quote_ident(obj);
    ELSE SELECT COALESCE(datacl, acldefault('d', datdba)) INTO acl FROM pg_database WHERE datname = current_database();
      target := 'DATABASE ' || quote_ident(current_database());
  END CASE;
  SELECT EXISTS (SELECT 1 FROM aclexplode(acl) a WHERE a.grantee = who AND a.privilege_type = priv) INTO present;
  EXECUTE format(CASE WHEN present THEN 'REVOKE %s ON %s FROM %s' ELSE 'GRANT %s ON %s TO %s' END, priv, target,
    CASE WHEN grantee = 'PUBLIC' THEN 'PUBLIC' ELSE quote_ident(grantee) END);
END $f$;`;

/** Toggles a default privilege of `owner` (schema layer when `schema` is set, else global). */
const TOGGLE_DEFAULT = `
CREATE FUNCTION rp_toggle_default(owner text, schema text, letter "char", objects text, priv text, grantee text)
RETURNS void LANGUAGE plpgsql AS $f$
DECLARE acl aclitem[]; who oid; present boolean;
BEGIN
  who := CASE WHEN grantee = 'PUBLIC' THEN 0 ELSE grantee::regrole::oid END;
  SELECT d.defaclacl INTO acl FROM pg_default_acl d
   WHERE d.defaclrole = owner::regrole AND d.defaclobjtype = letter
     AND d.defaclnamespace = COALESCE((SELECT oid FROM pg_namespace WHERE nspname = schema), 0);
  IF acl IS NULL AND schema IS NULL THEN
    acl := acldefault(CASE letter WHEN 'S' THEN 's' ELSE letter END, owner::regrole);
  END IF;
  SELECT EXISTS (SELECT 1 FROM aclexplode(acl) a WHERE a.grantee = who AND a.privilege_type = priv) INTO present;
  EXECUTE format('ALTER DEFAULT PRIVILEGES FOR ROLE %I %s %s %s ON %s %s %s', owner,
    CASE WHEN schema IS NULL THEN '' ELSE 'IN SCHEMA ' || quote_ident(schema) END,
    CASE WHEN present THEN 'REVOKE' ELSE 'GRANT' END, priv, objects,
    CASE WHEN present THEN 'FROM' ELSE 'TO' END,
    CASE WHEN grantee = 'PUBLIC' THEN 'PUBLIC' ELSE quote_ident(grantee) END);
END $f$;`;

describe.each(postgresTargets().map((target) => ({ target, label: postgresTargetLabel(target) })))(
  'catalog fingerprint on $label',
  ({ target }) => {
    let sandbox: PostgresSandbox;
    let connection: CatalogConnection;
    let version = 0;
    const prefix = `rp_${sandboxId()}_`;
    const r = (name: string): string => `${prefix}${name}`;
    const managed = ['reader', 'writer', 'app', 'grp', 'owner'].map(r);
    let scope: ManagedScope;
    let counter = 0;

    const fingerprint = async (): Promise<string | null> =>
      connection.db
        .transaction()
        .setIsolationLevel('repeatable read')
        .execute((trx) => readFingerprint(trx, scope));

    beforeAll(async () => {
      sandbox = await createPostgresSandbox('fingerprint', target);
      connection = openConnection({ url: sandbox.url });
      await runSql(
        sandbox.url,
        `${['reader', 'writer', 'grp', 'owner', 'other'].map((n) => `CREATE ROLE "${r(n)}";`).join('\n')}
         CREATE ROLE "${r('app')}" LOGIN PASSWORD 'initial';
         CREATE SCHEMA s1 AUTHORIZATION "${r('owner')}"; CREATE SCHEMA s2; CREATE SCHEMA outside;
         CREATE TABLE s1.t1 (id int); CREATE TABLE s1.t2 (id int); CREATE VIEW s1.v AS SELECT 1 AS x;
         CREATE SEQUENCE s1.q; CREATE FUNCTION s1.f(n integer) RETURNS int LANGUAGE sql AS 'SELECT n';
         CREATE TYPE s1.mood AS ENUM ('ok'); CREATE TABLE s1.ren_0 (id int); CREATE TABLE s2.t3 (id int); CREATE TABLE outside.x (id int);
         GRANT "${r('grp')}" TO "${r('app')}";
         ${TOGGLE_ACL} ${TOGGLE_DEFAULT}`,
      );
      version = (
        await sql<{ v: number }>`SELECT current_setting('server_version_num')::int AS v`.execute(
          connection.db,
        )
      ).rows[0]!.v;
      scope = scopeOf({
        roles: [...managed].sort(),
        schemas: ['s1', 's2'],
        owned_schemas: ['s1'],
        wildcards: [{ grantee: r('reader'), object_type: 'table', schema: 's1', privileges: ['SELECT'] }],
        public_objects: [
          { object_type: 'function', schema: 's1', name: 'f(integer)', privileges: ['EXECUTE'] },
        ],
        default_privilege_scopes: [
          {
            owner: r('owner'),
            scope: { type: 'schema', schema: 's1' },
            on_type: 'table',
            public_privileges: [],
          },
          {
            owner: r('owner'),
            scope: { type: 'global' },
            on_type: 'function',
            public_privileges: ['EXECUTE'],
          },
        ],
        include_database_privileges: true,
        database_targets: [sandbox.database],
        function_signatures: [{ schema: 's1', name: 'f(integer)' }],
      });
    });

    afterAll(async () => {
      await connection.close();
      await dropRolesWithPrefix(sandbox.adminUrl, [sandbox.url], prefix);
      await sandbox.drop();
    });

    /** One drift step in the managed scope, as SQL that always changes the catalog state it names. */
    const drift = (): fc.Arbitrary<{ label: string; sql: () => string }> => {
      const role = fc.constantFrom(...managed);
      const literal = (s: string): string => `'${s.replaceAll("'", "''")}'`;
      const toggle = (kind: string, objects: readonly string[], privileges: readonly string[]) =>
        fc
          .tuple(
            fc.constantFrom(...objects),
            fc.constantFrom(...privileges),
            fc.oneof(role, fc.constant('PUBLIC')),
          )
          .map(([obj, priv, grantee]) => ({
            label: `toggle ${priv} on ${kind} ${obj} for ${grantee}`,
            sql: () =>
              `SELECT rp_toggle_acl(${literal(kind)}, ${literal(obj)}, ${literal(priv)}, ${literal(grantee)})`,
          }));
      const steps = [
        toggle(
          'table',
          ['s1.t1', 's1.t2', 's1.v', 's2.t3'],
          ['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE'],
        ),
        toggle('sequence', ['s1.q'], ['USAGE', 'SELECT', 'UPDATE']),
        toggle('function', ['s1.f(integer)'], ['EXECUTE']),
        toggle('type', ['s1.mood'], ['USAGE']),
        toggle('schema', ['s1', 's2'], ['USAGE', 'CREATE']),
        toggle('database', ['-'], ['CONNECT', 'TEMPORARY', 'CREATE']),
        fc.constant({
          label: 'create a table in the wildcard schema',
          sql: () => `CREATE TABLE s1.${`added_${(counter += 1)}`} (id int)`,
        }),
        fc.constant({
          label: 'create a function in a managed schema',
          sql: () => `CREATE FUNCTION s2.${`fn_${(counter += 1)}`}() RETURNS int LANGUAGE sql AS 'SELECT 1'`,
        }),
        fc.constant({
          label: 'rename a relation in a managed schema',
          sql: () =>
            `DO $$ BEGIN EXECUTE format('ALTER TABLE s1.%I RENAME TO %I', (SELECT relname FROM pg_class WHERE relnamespace = 's1'::regnamespace AND relname LIKE 'ren%' AND relkind = 'r'), 'ren_${(counter += 1)}'); END $$`,
        }),
        fc
          .tuple(
            role,
            fc.constantFrom('LOGIN', 'CREATEDB', 'CREATEROLE', 'INHERIT', 'REPLICATION', 'BYPASSRLS'),
          )
          .map(([name, attribute]) => ({
            label: `toggle ${attribute} of ${name}`,
            sql: () => {
              const column = {
                LOGIN: 'rolcanlogin',
                CREATEDB: 'rolcreatedb',
                CREATEROLE: 'rolcreaterole',
                INHERIT: 'rolinherit',
                REPLICATION: 'rolreplication',
                BYPASSRLS: 'rolbypassrls',
              }[attribute];
              return `DO $$ BEGIN EXECUTE format(CASE WHEN (SELECT ${column} FROM pg_roles WHERE rolname = ${literal(name)}) THEN 'ALTER ROLE %I NO${attribute}' ELSE 'ALTER ROLE %I ${attribute}' END, ${literal(name)}); END $$`;
            },
          })),
        role.map((name) => ({
          label: `change the connection limit of ${name}`,
          sql: () =>
            `DO $$ BEGIN EXECUTE format('ALTER ROLE %I CONNECTION LIMIT %s', ${literal(name)}, (SELECT rolconnlimit + 2 FROM pg_roles WHERE rolname = ${literal(name)})); END $$`,
        })),
        fc.tuple(role, fc.integer({ min: 2030, max: 2090 })).map(([name, year]) => ({
          label: `change the expiry of ${name}`,
          sql: () =>
            `ALTER ROLE "${name}" VALID UNTIL '${year}-01-01T00:00:${String((counter += 1) % 60).padStart(2, '0')}Z'`,
        })),
        role.map((name) => ({
          label: `change the comment of ${name}`,
          sql: () => `COMMENT ON ROLE "${name}" IS 'comment ${(counter += 1)}'`,
        })),
        role.map((name) => ({
          label: `change a setting of ${name}`,
          sql: () => `ALTER ROLE "${name}" SET work_mem = '${64 + (counter += 1)}kB'`,
        })),
        fc.constant({
          label: 'change the password of the login role',
          sql: () => `ALTER ROLE "${r('app')}" PASSWORD 'changed-${(counter += 1)}'`,
        }),
        fc
          .tuple(fc.constantFrom(r('grp'), r('writer')), fc.constantFrom(r('app'), r('reader'), r('other')))
          .map(([granted, member]) => ({
            label: `toggle membership of ${member} in ${granted}`,
            sql: () =>
              `DO $$ BEGIN EXECUTE format(CASE WHEN pg_has_role(${literal(member)}, ${literal(granted)}, 'MEMBER') AND EXISTS (SELECT 1 FROM pg_auth_members WHERE roleid = ${literal(granted)}::regrole AND member = ${literal(member)}::regrole) THEN 'REVOKE %I FROM %I' ELSE 'GRANT %I TO %I' END, ${literal(granted)}, ${literal(member)}); END $$`,
          })),
        fc.constant({
          label: 'toggle the admin option of app in grp',
          sql: () =>
            `GRANT "${r('grp')}" TO "${r('app')}"; DO $$ BEGIN EXECUTE format(CASE WHEN (SELECT admin_option FROM pg_auth_members WHERE roleid = ${literal(r('grp'))}::regrole AND member = ${literal(r('app'))}::regrole LIMIT 1) THEN 'REVOKE ADMIN OPTION FOR %I FROM %I' ELSE 'GRANT %I TO %I WITH ADMIN OPTION' END, ${literal(r('grp'))}, ${literal(r('app'))}); END $$`,
        }),
        fc
          .tuple(fc.constantFrom('TABLES', 'SEQUENCES'), fc.oneof(role, fc.constant('PUBLIC')))
          .map(([objects, grantee]) => ({
            label: `toggle a schema default on ${objects} for ${grantee}`,
            sql: () =>
              `SELECT rp_toggle_default(${literal(r('owner'))}, 's1', ${objects === 'TABLES' ? "'r'" : "'S'"}, '${objects}', 'SELECT', ${literal(grantee)})`,
          })),
        fc.oneof(role, fc.constant('PUBLIC')).map((grantee) => ({
          label: `toggle the global function default for ${grantee}`,
          sql: () =>
            `SELECT rp_toggle_default(${literal(r('owner'))}, NULL, 'f', 'FUNCTIONS', 'EXECUTE', ${literal(grantee)})`,
        })),
        fc.constantFrom('s1', 's2').map((schema) => ({
          label: `change the owner of schema ${schema}`,
          sql: () =>
            `DO $$ BEGIN EXECUTE format('ALTER SCHEMA %I OWNER TO %I', ${literal(schema)}, CASE WHEN (SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = ${literal(schema)}) = ${literal(r('other'))} THEN ${literal(r('owner'))} ELSE ${literal(r('other'))} END); END $$`,
        })),
        fc.constantFrom('s1.t1', 's1.q', 's2.t3').map((relation) => ({
          label: `change the owner of ${relation}`,
          sql: () =>
            `DO $$ BEGIN EXECUTE format('ALTER TABLE ${relation} OWNER TO %I', CASE WHEN (SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = ${literal(relation)}::regclass) = ${literal(r('other'))} THEN ${literal(r('owner'))} ELSE ${literal(r('other'))} END); END $$`,
        })),
      ];
      const inheritOption = fc.constant({
        label: 'toggle the inherit option of app in grp (PostgreSQL 16+)',
        sql: () =>
          `GRANT "${r('grp')}" TO "${r('app')}"; DO $$ BEGIN EXECUTE format(CASE WHEN (SELECT inherit_option FROM pg_auth_members WHERE roleid = ${literal(r('grp'))}::regrole AND member = ${literal(r('app'))}::regrole LIMIT 1) THEN 'GRANT %I TO %I WITH INHERIT FALSE' ELSE 'GRANT %I TO %I WITH INHERIT TRUE' END, ${literal(r('grp'))}, ${literal(r('app'))}); END $$`,
      });
      return fc.oneof(...steps, ...(version >= 160000 ? [inheritOption] : []));
    };

    it('is stable while nothing in the catalog changes', async () => {
      const first = await fingerprint();
      expect(first).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(await fingerprint()).toBe(first);
      // Changes outside the managed scope may or may not move it; these do not.
      await runSql(
        sandbox.url,
        `CREATE TABLE outside.y (id int); GRANT SELECT ON outside.x TO "${r('reader')}"`,
      );
      expect(await fingerprint()).toBe(first);
    });

    it('random drift in the managed scope always changes the fingerprint', async () => {
      await fc.assert(
        fc.asyncProperty(drift(), async (step) => {
          const before = await fingerprint();
          await runSql(sandbox.url, step.sql());
          const after = await fingerprint();
          if (after === null || after === before) {
            throw new Error(`the fingerprint did not change after: ${step.label}`);
          }
        }),
        { numRuns: RUNS },
      );
    }, 600_000); // about 50 s on a loaded 2-core machine

    it('answers unchanged only for the fingerprint of the state it reads, and the full read carries it', async () => {
      const full = await inspectUnlessUnchanged(connection.db, scope, null);
      expect(full.kind).toBe('snapshot');
      if (full.kind !== 'snapshot') return;
      expect(full.snapshot).toEqual(await inspect(connection.db, scope, null));
      expect(full.fingerprint).toBe(await fingerprint());
      expect(await inspectUnlessUnchanged(connection.db, scope, null, { unless: full.fingerprint! })).toEqual(
        {
          kind: 'unchanged',
          fingerprint: full.fingerprint,
        },
      );
      await runSql(sandbox.url, `CREATE TABLE s1.late (id int)`);
      const after = await inspectUnlessUnchanged(connection.db, scope, null, { unless: full.fingerprint! });
      expect(after.kind).toBe('snapshot');
      expect(after.kind === 'snapshot' && after.snapshot.inventory).toContainEqual(
        expect.objectContaining({ kind: 'table', schema: 's1', name: 'late' }),
      );
    });

    it('leaves a foreign database target to the full path (which reports it)', async () => {
      const foreign = { ...scope, database_targets: ['not_this_database'] };
      await expect(
        connection.db.transaction().execute((trx) => readFingerprint(trx, foreign)),
      ).resolves.toBeNull();
    });
  },
);
