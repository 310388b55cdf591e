// The hostile-identifier corpus end to end on the real server: roles, schemas, tables and functions with
// quotes, semicolons, dollar quotes, unicode (astral too), 63-byte names and PUBLIC look-alikes are
// created, granted and revoked through the engine, and inspection reads back exactly the same names.

import {
  computePlan,
  deriveManagedScope,
  expandPolicy,
  renderSql,
  type DesiredState,
  type PolicyContent,
} from '@rolepolicy/policy';
import {
  createPostgresSandbox,
  postgresTargetLabel,
  postgresTargets,
  sandboxId,
  type PostgresSandbox,
} from '@rolepolicy/testing';
import pg from 'pg';

import { openConnection, type CatalogConnection } from './connection.js';
import { executeStatements } from './execute.js';
import { inspect } from './inspect.js';

const bytes63 = (unit: string): string => {
  let out = '';
  while (Buffer.byteLength(out + unit) <= 63) out += unit;
  while (Buffer.byteLength(`${out}x`) <= 63) out += 'x';
  return out;
};

/** Names used for schemas, tables and functions (database-local), and, with a suffix, for roles. */
const CORPUS: readonly string[] = [
  'plain',
  'a"b',
  '"',
  '""',
  '"PUBLIC"',
  'Public',
  "o'neil",
  "'; DROP ROLE x; --",
  'back\\slash',
  '$$',
  'x$$; DROP TABLE t; $$',
  'a;b',
  'with space',
  ' lead and trail ',
  '--comment',
  '/* open',
  'a(b',
  'é',
  '日本語',
  '\u{1F600}',
  'a\u{1F600}b\u{10348}',
  'user@example.com',
  'a.b',
  'app-reader',
  'select',
  'ALL',
  'U&"\\0041"',
  "E'\\x41'",
];
const LONG: readonly string[] = ['x'.repeat(63), bytes63('é'), bytes63('\u{1F600}')];

describe.each(postgresTargets().map((target) => ({ target, label: postgresTargetLabel(target) })))(
  'on $label',
  ({ target }) => {
    let sandbox: PostgresSandbox;
    let connection: CatalogConnection;
    const suffix = `~${sandboxId().slice(0, 6)}`;
    const roleOf = (name: string): string => `${name}${suffix}`;
    const q = (identifier: string): string => `"${identifier.replaceAll('"', '""')}"`;

    beforeAll(async () => {
      sandbox = await createPostgresSandbox('hostile', target);
      connection = openConnection({ url: sandbox.url });
      const client = new pg.Client({ connectionString: sandbox.url });
      await client.connect();
      try {
        for (const name of [...CORPUS, ...LONG]) {
          await client.query(`CREATE SCHEMA ${q(name)}`);
          await client.query(`CREATE TABLE ${q(name)}.${q(name)} (id int)`);
          await client.query(
            `CREATE FUNCTION ${q(name)}.${q(name)}(a integer) RETURNS int LANGUAGE sql AS 'SELECT a'`,
          );
        }
      } finally {
        await client.end();
      }
    });

    afterAll(async () => {
      // When beforeAll failed, its error is the one to see, not a TypeError from here.
      if ((sandbox as PostgresSandbox | undefined) === undefined) return;
      await (connection as CatalogConnection | undefined)?.close();
      const client = new pg.Client({ connectionString: sandbox.url });
      await client.connect();
      try {
        for (const name of CORPUS)
          await client.query(`DROP OWNED BY ${q(roleOf(name))}`).catch(() => undefined);
        for (const name of CORPUS) await client.query(`DROP ROLE IF EXISTS ${q(roleOf(name))}`);
      } finally {
        await client.end();
      }
      await sandbox.drop();
    });

    function policy(withGrants: boolean): PolicyContent {
      const everything = [...CORPUS, ...LONG];
      return {
        roles: CORPUS.map((name) => ({ name: roleOf(name), comment: name })),
        schemas: everything.map((name) => ({ name })),
        grants: withGrants
          ? everything.flatMap((name, index) => {
              const role = roleOf(CORPUS[index % CORPUS.length]!);
              return [
                { role, privileges: ['USAGE' as const], object: { type: 'schema' as const, name } },
                {
                  role,
                  privileges: ['SELECT' as const],
                  object: { type: 'table' as const, schema: name, name },
                },
                {
                  role,
                  privileges: ['EXECUTE' as const],
                  object: { type: 'function' as const, schema: name, name: `${name}(integer)` },
                },
              ];
            })
          : [],
      };
    }

    function expand(content: PolicyContent): DesiredState {
      const expansion = expandPolicy(content, { policyName: 'hostile' });
      if (!expansion.ok) throw new Error(JSON.stringify(expansion.errors, null, 2));
      return expansion.desired;
    }

    async function apply(desired: DesiredState) {
      const scope = deriveManagedScope(desired);
      const plan = async () => {
        const snapshot = await inspect(connection.db, scope, null);
        const result = computePlan({
          desired,
          snapshot,
          mode: 'authoritative',
          passwordSources: {},
          appliedPasswordSourceVersions: {},
          allowSchemaOwnerTransfers: false,
        });
        return { snapshot, result };
      };
      const before = await plan();
      expect(before.result.blockers).toEqual([]);
      const rendered = renderSql(before.result.changes, {
        serverVersionNum: before.snapshot.server_version_num,
        inventory: before.snapshot.inventory,
        passwords: {},
      });
      await executeStatements(connection.db, rendered.statements);
      const after = await plan();
      // Short lines, not a deep diff of every change: a CI log once cut this test's error off entirely.
      expect(after.result.changes.map((change) => JSON.stringify(change)).slice(0, 5)).toEqual([]);
      return after.snapshot;
    }

    describe('hostile identifiers end to end', () => {
      it('are created, granted and read back exactly, then revoked', async () => {
        const granted = await apply(expand(policy(true)));
        // Each check lists only what differs, so a failure stays readable in a truncated CI log.
        const roles = new Set(granted.roles.map((role) => JSON.stringify([role.name, role.state.comment])));
        const wantedRoles = CORPUS.map((name) => JSON.stringify([roleOf(name), name]));
        expect(wantedRoles.filter((role) => !roles.has(role))).toEqual([]);
        expect([...roles].filter((role) => !wantedRoles.includes(role))).toEqual([]);
        const everything = [...CORPUS, ...LONG];
        const seen = granted.grants.map((grant) =>
          JSON.stringify([grant.object_type, grant.schema, grant.name, grant.grantee]),
        );
        const wanted = everything.flatMap((name, index) => {
          const role = roleOf(CORPUS[index % CORPUS.length]!);
          return [
            JSON.stringify(['schema', null, name, role]),
            JSON.stringify(['table', name, name, role]),
            JSON.stringify(['function', name, `${name}(a integer)`, role]),
          ];
        });
        expect(wanted.filter((grant) => !seen.includes(grant))).toEqual([]);
        expect(seen.filter((grant) => !wanted.includes(grant))).toEqual([]);

        const revoked = await apply(expand(policy(false)));
        expect(revoked.grants.map((grant) => JSON.stringify(grant))).toEqual([]);
      }, 120_000);
    });
  },
);
