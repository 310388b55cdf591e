// Inspection on the real PostgreSQL, per object kind: the state is created with raw SQL, inspected,
// and compared with the snapshot the engine expects (scope rules of docs/catalog.md).

import { logicalFingerprint } from '@rolepolicy/policy';
import {
  createPostgresSandbox,
  postgresTargetLabel,
  postgresTargets,
  sandboxId,
  type PostgresSandbox,
} from '@rolepolicy/testing';

import { openConnection, type CatalogConnection } from './connection.js';
import { inspect, InspectionError } from './inspect.js';
import { dropRolesWithPrefix, runSql, scopeOf } from './test-support/scope.js';

describe.each(postgresTargets().map((target) => ({ target, label: postgresTargetLabel(target) })))(
  'on $label',
  ({ target }) => {
    let sandbox: PostgresSandbox;
    let connection: CatalogConnection;
    const prefix = `rp_${sandboxId()}_`;
    const r = (name: string): string => `${prefix}${name}`;

    beforeAll(async () => {
      sandbox = await createPostgresSandbox('inspect', target);
      connection = openConnection({ url: sandbox.url });
    });

    afterAll(async () => {
      await connection.close();
      await dropRolesWithPrefix(sandbox.adminUrl, [sandbox.url], prefix);
      await sandbox.drop();
    });

    describe('inspection reads exactly the managed scope', () => {
      it('roles: attributes, comment, config split on the first =, list GUCs canonical, expiry in UTC', async () => {
        await runSql(
          sandbox.url,
          `CREATE ROLE "${r('app')}" LOGIN CREATEDB NOINHERIT CONNECTION LIMIT 5 VALID UNTIL '2025-12-31T05:00:00.123+05:00';
       COMMENT ON ROLE "${r('app')}" IS 'the app';
       ALTER ROLE "${r('app')}" SET search_path = a, 'My Schema', '$user';
       ALTER ROLE "${r('app')}" SET "App.Tenant" = 'x=y';
       CREATE ROLE "${r('forever')}" VALID UNTIL 'infinity';
       CREATE ROLE "${r('unmanaged')}";`,
        );
        const snapshot = await inspect(
          connection.db,
          scopeOf({ roles: [r('app'), r('forever'), r('missing')] }),
          null,
        );
        expect(snapshot.roles).toEqual([
          {
            name: r('app'),
            state: {
              login: true,
              superuser: false,
              createdb: true,
              createrole: false,
              inherit: false,
              replication: false,
              bypassrls: false,
              connection_limit: 5,
              comment: 'the app',
              password_valid_until: '2025-12-31T00:00:00Z',
              config: { 'app.tenant': 'x=y', search_path: 'a, "My Schema", "$user"' },
            },
          },
          {
            name: r('forever'),
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
              config: {},
            },
          },
        ]);
        expect(snapshot.existing_roles).toEqual([r('app'), r('forever')]);
      });

      it('memberships: only where the granted role is managed; inherit of an edge granted without INHERIT is the member rolinherit', async () => {
        await runSql(
          sandbox.url,
          `CREATE ROLE "${r('group')}"; CREATE ROLE "${r('m1')}" NOINHERIT; CREATE ROLE "${r('m2')}";
       CREATE ROLE "${r('other_group')}";
       GRANT "${r('group')}" TO "${r('m1')}" WITH ADMIN OPTION; GRANT "${r('group')}" TO "${r('m2')}";
       GRANT "${r('other_group')}" TO "${r('m1')}";
       GRANT pg_read_all_stats TO "${r('m2')}";`,
        );
        const snapshot = await inspect(
          connection.db,
          scopeOf({ roles: [r('group'), r('m1'), r('m2')], membership_grantors: ['pg_read_all_stats'] }),
          null,
        );
        // pg_read_all_stats is cluster-global: other suites may add members of their own meanwhile.
        const ours = snapshot.memberships.filter(
          (edge) => edge.member === 'pg_monitor' || edge.member.startsWith(prefix),
        );
        expect(ours).toEqual([
          // The built-in pg_* -> pg_* edge is read too (the diff never revokes it).
          { role: 'pg_read_all_stats', member: 'pg_monitor', inherit: true, admin: false, grantor: null },
          { role: 'pg_read_all_stats', member: r('m2'), inherit: true, admin: false, grantor: null },
          // PG < 16 reports m1's NOINHERIT; PG16+ recorded it as the edge's inherit_option when granted.
          { role: r('group'), member: r('m1'), inherit: false, admin: true, grantor: null },
          { role: r('group'), member: r('m2'), inherit: true, admin: false, grantor: null },
        ]);
      });

      it('schemas: owner and the owner privileges from the ACL, even for a superuser owner after REVOKE', async () => {
        await runSql(
          sandbox.url,
          `CREATE ROLE "${r('owner')}"; CREATE SCHEMA s_owned AUTHORIZATION "${r('owner')}";
       CREATE SCHEMA s_super; REVOKE CREATE ON SCHEMA s_super FROM postgres;
       GRANT USAGE ON SCHEMA s_owned TO "${r('owner')}";`,
        );
        const snapshot = await inspect(
          connection.db,
          scopeOf({ roles: [r('owner')], schemas: ['s_owned', 's_super', 's_missing'] }),
          null,
        );
        expect(snapshot.schemas).toEqual([
          { name: 's_owned', owner: r('owner'), owner_privileges: ['CREATE', 'USAGE'] },
          { name: 's_super', owner: 'postgres', owner_privileges: ['USAGE'] },
        ]);
        // The owner's own entries live on the schema, never as grant rows.
        expect(snapshot.grants).toEqual([]);
      });

      it('object grants per kind: tables (r, p), views, materialized views, sequences, functions, types, schemas, database', async () => {
        await runSql(
          sandbox.url,
          `CREATE ROLE "${r('reader')}"; CREATE ROLE "${r('stranger')}";
       CREATE SCHEMA k;
       CREATE TABLE k.t (id int); CREATE TABLE k.p (id int) PARTITION BY RANGE (id);
       CREATE VIEW k.v AS SELECT 1 AS x; CREATE MATERIALIZED VIEW k.m AS SELECT 1 AS x;
       CREATE SEQUENCE k.seq;
       CREATE FUNCTION k.f(p_id integer, OUT x text, VARIADIC rest integer[]) LANGUAGE sql AS 'SELECT ''a''';
       CREATE PROCEDURE k.pr(IN a integer) LANGUAGE sql AS 'SELECT 1';
       CREATE DOMAIN k.d AS int; CREATE TYPE k.e AS ENUM ('a'); CREATE TYPE k.c AS (a int);
       GRANT SELECT, INSERT ON k.t TO "${r('reader')}"; GRANT SELECT ON k.p TO "${r('reader')}";
       GRANT SELECT ON k.v TO "${r('reader')}"; GRANT SELECT ON k.m TO "${r('reader')}";
       GRANT USAGE, SELECT ON SEQUENCE k.seq TO "${r('reader')}";
       GRANT EXECUTE ON FUNCTION k.f(integer, integer[]) TO "${r('reader')}";
       GRANT EXECUTE ON PROCEDURE k.pr(integer) TO "${r('reader')}";
       GRANT USAGE ON TYPE k.d TO "${r('reader')}"; GRANT USAGE ON TYPE k.e TO "${r('reader')}";
       GRANT USAGE ON TYPE k.c TO "${r('reader')}";
       GRANT USAGE ON SCHEMA k TO "${r('reader')}";
       GRANT CONNECT, TEMPORARY ON DATABASE "${sandbox.database}" TO "${r('reader')}";
       GRANT SELECT ON k.t TO "${r('stranger')}";`,
        );
        const snapshot = await inspect(
          connection.db,
          scopeOf({
            roles: [r('reader')],
            schemas: ['k'],
            include_database_privileges: true,
            database_targets: [sandbox.database],
          }),
          null,
        );
        const g = (object_type: string, schema: string | null, name: string, privileges: string[]) => ({
          object_type,
          schema,
          name,
          grantee: r('reader'),
          privileges,
        });
        expect(snapshot.grants).toEqual([
          g('database', null, sandbox.database, ['CONNECT', 'TEMPORARY']),
          g('function', 'k', 'f(p_id integer, OUT x text, VARIADIC rest integer[])', ['EXECUTE']),
          g('function', 'k', 'pr(IN a integer)', ['EXECUTE']),
          g('materialized_view', 'k', 'm', ['SELECT']),
          g('schema', null, 'k', ['USAGE']),
          g('sequence', 'k', 'seq', ['SELECT', 'USAGE']),
          g('table', 'k', 'p', ['SELECT']),
          g('table', 'k', 't', ['INSERT', 'SELECT']),
          g('type', 'k', 'c', ['USAGE']),
          g('type', 'k', 'd', ['USAGE']),
          g('type', 'k', 'e', ['USAGE']),
          g('view', 'k', 'v', ['SELECT']),
        ]);
      });

      it('a database grant naming another database is an InvalidDatabaseTarget inspection error', async () => {
        const failure: unknown = await inspect(
          connection.db,
          scopeOf({ include_database_privileges: true, database_targets: ['elsewhere'] }),
          null,
        ).catch((error: unknown) => error);
        expect(failure).toBeInstanceOf(InspectionError);
        expect(failure).toMatchObject({
          code: 'InvalidDatabaseTarget',
          message: expect.stringContaining(
            `database grant target "elsewhere" does not match connected database "${sandbox.database}"`,
          ),
        });
      });

      it('PUBLIC rows only for declared PUBLIC rules, with acldefault built-ins (sequence letter s)', async () => {
        await runSql(
          sandbox.url,
          `CREATE SCHEMA pub;
       CREATE FUNCTION pub.open(a int) RETURNS int LANGUAGE sql AS 'SELECT 1';
       CREATE FUNCTION pub.closed(a int) RETURNS int LANGUAGE sql AS 'SELECT 1';
       REVOKE EXECUTE ON FUNCTION pub.closed(int) FROM PUBLIC;
       CREATE TYPE pub.ty AS ENUM ('x');
       CREATE SEQUENCE pub.s; GRANT USAGE ON SEQUENCE pub.s TO PUBLIC;
       CREATE TABLE pub.t (id int); GRANT SELECT, INSERT ON pub.t TO PUBLIC;`,
        );
        const none = await inspect(connection.db, scopeOf({ schemas: ['pub'] }), null);
        expect(none.grants).toEqual([]);
        const snapshot = await inspect(
          connection.db,
          scopeOf({
            schemas: ['pub'],
            public_objects: [
              { object_type: 'function', schema: 'pub', name: '*', privileges: ['EXECUTE'] },
              { object_type: 'type', schema: 'pub', name: 'ty', privileges: ['USAGE'] },
              { object_type: 'sequence', schema: 'pub', name: 's', privileges: ['USAGE', 'SELECT'] },
              { object_type: 'table', schema: 'pub', name: 't', privileges: ['SELECT'] },
              { object_type: 'database', schema: null, name: sandbox.database, privileges: ['CONNECT'] },
            ],
          }),
          null,
        );
        const p = (object_type: string, schema: string | null, name: string, privileges: string[]) => ({
          object_type,
          schema,
          name,
          grantee: 'PUBLIC',
          privileges,
        });
        expect(snapshot.grants).toEqual([
          p('database', null, sandbox.database, ['CONNECT']),
          p('function', 'pub', 'open(a integer)', ['EXECUTE']),
          p('sequence', 'pub', 's', ['USAGE']),
          p('table', 'pub', 't', ['SELECT']),
          p('type', 'pub', 'ty', ['USAGE']),
        ]);
      });

      it('default privileges: schema layer for managed grantees, global layer for declared pairs, owner self-entries dropped', async () => {
        await runSql(
          sandbox.url,
          `CREATE ROLE "${r('dp_owner')}"; CREATE ROLE "${r('dp_reader')}"; CREATE ROLE "${r('dp_other')}";
       CREATE SCHEMA dp;
       ALTER DEFAULT PRIVILEGES FOR ROLE "${r('dp_owner')}" IN SCHEMA dp GRANT SELECT ON TABLES TO "${r('dp_reader')}";
       ALTER DEFAULT PRIVILEGES FOR ROLE "${r('dp_owner')}" IN SCHEMA dp GRANT SELECT ON TABLES TO "${r('dp_other')}";
       ALTER DEFAULT PRIVILEGES FOR ROLE "${r('dp_owner')}" GRANT USAGE ON SEQUENCES TO "${r('dp_reader')}";
       ALTER DEFAULT PRIVILEGES FOR ROLE "${r('dp_owner')}" GRANT EXECUTE ON FUNCTIONS TO "${r('dp_reader')}";`,
        );
        const snapshot = await inspect(
          connection.db,
          scopeOf({
            roles: [r('dp_owner'), r('dp_reader')],
            schemas: ['dp'],
            default_privilege_scopes: [
              { owner: r('dp_owner'), scope: { type: 'global' }, on_type: 'sequence', public_privileges: [] },
              {
                owner: r('dp_owner'),
                scope: { type: 'global' },
                on_type: 'function',
                public_privileges: ['EXECUTE'],
              },
              { owner: r('dp_owner'), scope: { type: 'global' }, on_type: 'type', public_privileges: [] },
            ],
          }),
          null,
        );
        expect(snapshot.default_privileges).toEqual([
          {
            owner: r('dp_owner'),
            scope: { type: 'global' },
            on_type: 'function',
            grantee: 'PUBLIC',
            privileges: ['EXECUTE'],
          },
          {
            owner: r('dp_owner'),
            scope: { type: 'global' },
            on_type: 'function',
            grantee: r('dp_reader'),
            privileges: ['EXECUTE'],
          },
          {
            owner: r('dp_owner'),
            scope: { type: 'global' },
            on_type: 'sequence',
            grantee: r('dp_reader'),
            privileges: ['USAGE'],
          },
          {
            owner: r('dp_owner'),
            scope: { type: 'schema', schema: 'dp' },
            on_type: 'table',
            grantee: r('dp_reader'),
            privileges: ['SELECT'],
          },
        ]);
      });

      it('function signatures (also with argument names) resolve to the identity key; a missing one is null', async () => {
        await runSql(
          sandbox.url,
          `CREATE SCHEMA fs; CREATE FUNCTION fs.calc(p_id integer, OUT x text) LANGUAGE sql AS 'SELECT ''a''';`,
        );
        const snapshot = await inspect(
          connection.db,
          scopeOf({
            schemas: ['fs'],
            function_signatures: [
              { schema: 'fs', name: 'calc(integer)' },
              { schema: 'fs', name: 'calc(text)' },
              { schema: 'fs', name: 'calc' },
              { schema: 'fs', name: 'calc(p_id integer, OUT x text)' },
            ],
          }),
          null,
        );
        expect(snapshot.function_signatures).toEqual([
          { schema: 'fs', declared: 'calc(integer)', identity: 'calc(p_id integer, OUT x text)' },
          { schema: 'fs', declared: 'calc(text)', identity: null },
          { schema: 'fs', declared: 'calc', identity: 'calc(p_id integer, OUT x text)' },
          {
            schema: 'fs',
            declared: 'calc(p_id integer, OUT x text)',
            identity: 'calc(p_id integer, OUT x text)',
          },
        ]);
      });

      it('identity: physical system identifier as an unsigned decimal, logical fingerprint from the connection', async () => {
        const port = Number(new URL(sandbox.url).port || 5432);
        const snapshot = await inspect(connection.db, scopeOf({}), {
          host: '127.0.0.1',
          port,
          database: sandbox.database,
        });
        expect(snapshot.identity.physical).toMatch(/^[0-9]+$/);
        expect(snapshot.identity.physical_available).toBe(true);
        expect(snapshot.identity.logical_fingerprint).toBe(
          logicalFingerprint('127.0.0.1', port, sandbox.database),
        );
        expect(snapshot.current_database).toBe(sandbox.database);
        expect(snapshot.executor).toMatchObject({ role: 'postgres', superuser: true });
        // A superuser is a member of every role as pg_has_role sees it: listing them would put the whole
        // cluster's roles into every snapshot (and make it grow with unrelated tenants).
        expect(snapshot.executor.member_of).toEqual([]);
      });
    });

    describe('physical identity', () => {
      it('is unavailable (not an error) when EXECUTE on pg_control_system is revoked (SQLSTATE 42501)', async () => {
        await runSql(
          sandbox.url,
          `CREATE ROLE "${r('noid')}"; REVOKE EXECUTE ON FUNCTION pg_control_system() FROM PUBLIC;`,
        );
        const restricted = openConnection({ url: sandbox.url, setRole: r('noid') });
        try {
          const snapshot = await inspect(restricted.db, scopeOf({ roles: [r('noid')] }), null);
          expect(snapshot.identity).toEqual({
            physical: null,
            physical_available: false,
            logical_fingerprint: null,
          });
          // The failed read is contained by a savepoint: the reads after it still work.
          expect(snapshot.roles.map((role) => role.name)).toEqual([r('noid')]);
        } finally {
          await restricted.close();
          await runSql(sandbox.url, 'GRANT EXECUTE ON FUNCTION pg_control_system() TO PUBLIC;');
        }
      });
    });

    describe('wildcards', () => {
      it('inventory lists every object of each (kind, schema) scope, relkinds kept apart', async () => {
        await runSql(
          sandbox.url,
          `CREATE ROLE "${r('wc')}"; CREATE SCHEMA wc;
       CREATE TABLE wc.t1 (id int); CREATE TABLE wc.t2 (id int); CREATE VIEW wc.v AS SELECT 1 AS x;
       CREATE MATERIALIZED VIEW wc.m AS SELECT 1 AS x; CREATE SEQUENCE wc.s;
       CREATE FUNCTION wc.f(a int) RETURNS int LANGUAGE sql AS 'SELECT a';
       GRANT SELECT ON wc.t1 TO "${r('wc')}";`,
        );
        const snapshot = await inspect(
          connection.db,
          scopeOf({
            roles: [r('wc')],
            schemas: ['wc'],
            wildcards: [
              { grantee: r('wc'), object_type: 'table', schema: 'wc', privileges: ['SELECT'] },
              { grantee: r('wc'), object_type: 'function', schema: 'wc', privileges: ['EXECUTE'] },
            ],
          }),
          null,
        );
        expect(snapshot.inventory).toEqual([
          { kind: 'function', schema: 'wc', name: 'f(a integer)', owner: 'postgres' },
          { kind: 'table', schema: 'wc', name: 't1', owner: 'postgres' },
          { kind: 'table', schema: 'wc', name: 't2', owner: 'postgres' },
        ]);
        // A superuser executor can grant anything: no grantability read, nothing blocks.
        expect(snapshot.unsatisfiable_wildcards).toEqual([]);
      });

      it('an unsatisfied wildcard the executor cannot grant is reported, with examples and owners', async () => {
        await runSql(
          sandbox.url,
          `CREATE ROLE "${r('exec')}" CREATEROLE; CREATE ROLE "${r('gr')}"; CREATE ROLE "${r('foreign_owner')}";
       CREATE ROLE "${r('team')}"; GRANT "${r('team')}" TO "${r('exec')}";
       CREATE SCHEMA ws; GRANT USAGE ON SCHEMA ws TO "${r('exec')}";
       CREATE TABLE ws.mine (id int); ALTER TABLE ws.mine OWNER TO "${r('exec')}";
       CREATE TABLE ws.theirs (id int); ALTER TABLE ws.theirs OWNER TO "${r('foreign_owner')}";
       CREATE TABLE ws.shared (id int); ALTER TABLE ws.shared OWNER TO "${r('foreign_owner')}";
       GRANT SELECT ON ws.shared TO "${r('exec')}" WITH GRANT OPTION;`,
        );
        const restricted = openConnection({ url: sandbox.url, setRole: r('exec') });
        try {
          const snapshot = await inspect(
            restricted.db,
            scopeOf({
              roles: [r('gr')],
              schemas: ['ws'],
              wildcards: [
                { grantee: r('gr'), object_type: 'table', schema: 'ws', privileges: ['SELECT', 'INSERT'] },
              ],
            }),
            null,
          );
          expect(snapshot.executor).toEqual({
            role: r('exec'),
            superuser: false,
            createrole: true,
            member_of: [r('team')],
          });
          expect(snapshot.unsatisfiable_wildcards).toEqual([
            {
              grantee: r('gr'),
              object_type: 'table',
              schema: 'ws',
              privileges: ['INSERT', 'SELECT'],
              executor: r('exec'),
              count: 2,
              examples: [
                { name: 'shared', owner: r('foreign_owner') },
                { name: 'theirs', owner: r('foreign_owner') },
              ],
            },
          ]);
        } finally {
          await restricted.close();
        }
      });
    });
  },
);
