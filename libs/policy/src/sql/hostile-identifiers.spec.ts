// The hostile-identifier corpus: every name goes into every identifier slot, the SQL is parsed by PostgreSQL's
// own parser (libpg-query), and the parse must contain exactly the intended statements and identifiers.
import fc from 'fast-check';
import type { Change } from '../model/change.js';
import { scramSha256Verifier } from '../password/scram.js';
import { renderSql } from './render.js';
import { SqlRenderError } from './errors.js';
import { splitRoutineName } from './routine.js';
import { loadParser, parseStatements, type ParsedRole } from './test-support/pg-parse.js';

const bytes63 = (unit: string, filler: string): string => {
  let s = '';
  while (Buffer.byteLength(s + unit) <= 63) s += unit;
  while (Buffer.byteLength(s + filler) <= 63) s += filler;
  return s;
};

const CORPUS: readonly string[] = [
  'plain',
  'a"b',
  '"',
  '""',
  '"PUBLIC"',
  'PUBLIC',
  'Public',
  "o'neil",
  "'; DROP ROLE x; --",
  'back\\slash',
  '\\',
  "\\'",
  '$$',
  '$body$',
  'x$$; DROP TABLE t; $$',
  ';',
  'a;b',
  'with space',
  ' leading and trailing ',
  'tab\tnew\nline',
  '--comment',
  '/* open',
  '*/',
  '(',
  ')',
  'f(integer)',
  'a(b',
  'é',
  'Ünïcödé',
  '日本語',
  '\u{1F600}',
  'a\u{1F600}b\u{10348}',
  'x'.repeat(63),
  bytes63('é', 'x'),
  bytes63('\u{1F600}', 'a'),
  bytes63('日', 'b'),
  'user@example.com',
  'a.b',
  'schema.table',
  'app-reader',
  'current_user',
  'SESSION_USER',
  'ALL',
  'select',
  'U&"\\0041"',
  "E'\\x41'",
];

const roleOf = (name: string): ParsedRole => ({ role: name });
const granteeOf = (name: string): ParsedRole => (name === 'PUBLIC' ? { public: true } : { role: name });
// A canonical list-GUC value holding `name` as one quoted element, then `b`.
const listValue = (name: string): string => `"${name.replaceAll('"', '""')}", b`;

function scenario(n: string, verifier: string): { changes: Change[]; expected: unknown[] } {
  const state = {
    login: true,
    superuser: false,
    createdb: false,
    createrole: false,
    inherit: true,
    replication: false,
    bypassrls: false,
    connection_limit: -1,
    comment: n,
    password_valid_until: null,
  };
  const changes: Change[] = [
    { kind: 'create_role', name: n, state },
    {
      kind: 'alter_role',
      name: n,
      attributes: [
        { kind: 'login', value: false },
        { kind: 'set_config', parameter: n, value: n },
        { kind: 'set_config', parameter: 'search_path', value: listValue(n) },
        { kind: 'reset_config', parameter: n },
      ],
    },
    { kind: 'create_schema', name: n, owner: n },
    { kind: 'alter_schema_owner', name: n, owner: n },
    { kind: 'grant', role: n, privileges: ['SELECT'], object_type: 'table', name: n, schema: n },
    { kind: 'grant', role: 'PUBLIC', privileges: ['USAGE'], object_type: 'schema', name: n, schema: null },
    {
      kind: 'grant',
      role: n,
      privileges: ['EXECUTE'],
      object_type: 'function',
      name: `${n}(integer)`,
      schema: n,
    },
    { kind: 'grant', role: n, privileges: ['USAGE'], object_type: 'type', name: '*', schema: n },
    {
      kind: 'set_default_privilege',
      owner: n,
      scope: { type: 'schema', schema: n },
      on_type: 'table',
      grantee: n,
      privileges: ['SELECT'],
    },
    { kind: 'add_member', role: n, member: n, inherit: false, admin: true },
    { kind: 'remove_member', role: n, member: n, grantor: n },
    { kind: 'revoke', role: n, privileges: ['INSERT'], object_type: 'view', name: n, schema: n, grantor: n },
    { kind: 'reassign_owned', from_role: n, to_role: n },
    { kind: 'drop_owned', role: n },
    { kind: 'terminate_sessions', role: n },
    { kind: 'set_password', name: n, password_source: 's:k:1' },
    { kind: 'drop_role', name: n },
  ];
  const grantStmt = (
    objtype: string,
    objects: string[][],
    privileges: string[],
    grantees: ParsedRole[],
    isGrant = true,
  ) => ({
    kind: 'GrantStmt',
    is_grant: isGrant,
    targtype: 'ACL_TARGET_OBJECT',
    objtype,
    objects,
    privileges,
    grantees,
  });
  const expected = [
    { kind: 'CreateRoleStmt', role: n },
    { kind: 'CommentStmt', objtype: 'OBJECT_ROLE', object: { sval: n }, comment: n },
    { kind: 'AlterRoleStmt', role: roleOf(n), options: ['canlogin'], literals: [] },
    { kind: 'AlterRoleSetStmt', role: roleOf(n), name: n, args: [n] },
    { kind: 'AlterRoleSetStmt', role: roleOf(n), name: 'search_path', args: [n, 'b'] },
    { kind: 'AlterRoleSetStmt', role: roleOf(n), name: n, args: [] },
    { kind: 'CreateSchemaStmt', schema: n, owner: roleOf(n) },
    { kind: 'AlterOwnerStmt', objectType: 'OBJECT_SCHEMA', object: [n], owner: roleOf(n) },
    grantStmt('OBJECT_TABLE', [[n, n]], ['select'], [granteeOf(n)]),
    grantStmt('OBJECT_SCHEMA', [[n]], ['usage'], [{ public: true }]),
    grantStmt('OBJECT_ROUTINE', [[n, n]], ['execute'], [granteeOf(n)]),
    grantStmt('OBJECT_TYPE', [[n, n]], ['usage'], [granteeOf(n)]),
    {
      kind: 'AlterDefaultPrivilegesStmt',
      roles: [roleOf(n)],
      schemas: [n],
      action: {
        is_grant: true,
        targtype: 'ACL_TARGET_DEFAULTS',
        objtype: 'OBJECT_TABLE',
        objects: [],
        privileges: ['select'],
        grantees: [granteeOf(n)],
      },
    },
    {
      kind: 'GrantRoleStmt',
      is_grant: true,
      granted: [n],
      grantees: [roleOf(n)],
      grantor: null,
      options: ['inherit', 'admin'],
    },
    {
      kind: 'GrantRoleStmt',
      is_grant: false,
      granted: [n],
      grantees: [roleOf(n)],
      grantor: roleOf(n),
      options: [],
    },
    { kind: 'VariableSetStmt', name: 'role', args: [n] },
    grantStmt('OBJECT_TABLE', [[n, n]], ['insert'], [granteeOf(n)], false),
    { kind: 'VariableSetStmt', name: 'role', args: [] },
    { kind: 'ReassignOwnedStmt', roles: [roleOf(n)], newrole: roleOf(n) },
    { kind: 'DropOwnedStmt', roles: [roleOf(n)] },
    { kind: 'SelectStmt', literals: [n] },
    { kind: 'AlterRoleStmt', role: roleOf(n), options: ['password'], literals: [verifier] },
    { kind: 'DropRoleStmt', roles: [roleOf(n)], missing_ok: true },
  ];
  return { changes, expected };
}

beforeAll(async () => {
  await loadParser();
});

describe('hostile identifiers parsed by the PostgreSQL parser', () => {
  const verifier = scramSha256Verifier('pw', Buffer.alloc(16, 5));

  it.each(CORPUS.map((name) => [JSON.stringify(name), name]))(
    '%s renders exactly the intended statements and identifiers (PG16 syntax)',
    (_label, name) => {
      const { changes, expected } = scenario(name, verifier);
      const inventory = [{ kind: 'type' as const, schema: name, name, owner: 'o' }];
      const out = renderSql(changes, {
        serverVersionNum: 160004,
        inventory,
        passwords: { [name]: verifier },
      });
      const parsed = parseStatements(out.sql);
      expect(parsed).toHaveLength(out.statementCount);
      expect(parsed).toEqual(expected);
      // The redacted twin parses to the same statements, with the placeholder instead of the verifier.
      const redacted = parseStatements(out.redactedSql);
      expect(redacted).toHaveLength(out.statementCount);
      expect(out.redactedSql).not.toContain(verifier);
    },
  );

  it.each(CORPUS.map((name) => [JSON.stringify(name), name]))(
    '%s in a grouped statement: every object and grantee parses back exactly, in one statement',
    (_label, name) => {
      const other = name === 'plain' ? 'other' : 'plain';
      const inventory = [name, other].map((n) => ({
        kind: 'table' as const,
        schema: name,
        name: n,
        owner: 'o',
      }));
      const grantees = [...new Set([name, 'PUBLIC', '"PUBLIC"'])];
      const changes: Change[] = grantees.map((role) => ({
        kind: 'grant',
        role,
        privileges: ['SELECT'],
        object_type: 'table',
        name: '*',
        schema: name,
      }));
      const out = renderSql(changes, { serverVersionNum: 160004, inventory, passwords: {} });
      expect(out.statementCount).toBe(1);
      const parsed = parseStatements(out.sql);
      expect(parsed).toHaveLength(1);
      expect(parsed[0]).toMatchObject({
        kind: 'GrantStmt',
        objects: expect.arrayContaining([
          [name, name],
          [name, other],
        ]) as unknown,
        grantees: grantees.map(granteeOf),
      });
      expect(parsed[0]!['objects']).toHaveLength(2);
    },
  );

  it.each(CORPUS.map((name) => [JSON.stringify(name), name]))(
    '%s renders PG15 membership syntax that parses to the intended edge',
    (_label, name) => {
      const out = renderSql(
        [
          { kind: 'add_member', role: name, member: name, inherit: false, admin: true },
          { kind: 'remove_member', role: name, member: name, grantor: name },
        ],
        { serverVersionNum: 150020, inventory: [], passwords: {} },
      );
      expect(parseStatements(out.sql)).toEqual([
        {
          kind: 'GrantRoleStmt',
          is_grant: true,
          granted: [name],
          grantees: [roleOf(name)],
          grantor: null,
          options: ['admin'],
        },
        {
          kind: 'GrantRoleStmt',
          is_grant: false,
          granted: [name],
          grantees: [roleOf(name)],
          grantor: null,
          options: [],
        },
      ]);
    },
  );

  it.each(['public', 'none'])(
    '%s is refused in role positions, because quoting does not make it an ordinary role',
    (name) => {
      expect(() =>
        renderSql(
          [
            {
              kind: 'grant',
              role: name,
              privileges: ['USAGE'],
              object_type: 'schema',
              name: 's',
              schema: null,
            },
          ],
          {
            serverVersionNum: 160000,
            inventory: [],
            passwords: {},
          },
        ),
      ).toThrow(SqlRenderError);
      // ...while the exact PUBLIC grantee is the pseudo-role and "PUBLIC" is a role literally named so.
      expect(
        parseStatements(
          renderSql(
            [
              {
                kind: 'grant',
                role: 'PUBLIC',
                privileges: ['USAGE'],
                object_type: 'schema',
                name: 's',
                schema: null,
              },
              {
                kind: 'grant',
                role: '"PUBLIC"',
                privileges: ['USAGE'],
                object_type: 'schema',
                name: 's',
                schema: null,
              },
            ],
            { serverVersionNum: 160000, inventory: [], passwords: {} },
          ).sql,
        ).map((s) => s['grantees']),
      ).toEqual([[{ public: true }, { role: '"PUBLIC"' }]]);
    },
  );

  it('random identifiers round-trip through quoting and the parser', () => {
    const identifier = fc
      .string({ unit: 'binary', minLength: 1, maxLength: 63 })
      .filter((s) => !s.includes('\0') && Buffer.byteLength(s) <= 63 && s !== 'public' && s !== 'none');
    fc.assert(
      fc.property(
        identifier,
        identifier,
        identifier,
        fc.string({ unit: 'binary', minLength: 1 }), // IS '' parses as no comment (the server drops it too)
        (role, schema, table, comment) => {
          fc.pre(!comment.includes('\0'));
          const out = renderSql(
            [
              { kind: 'grant', role, privileges: ['SELECT'], object_type: 'table', name: table, schema },
              { kind: 'set_comment', name: role, comment },
            ],
            { serverVersionNum: 160000, inventory: [], passwords: {} },
          );
          const parsed = parseStatements(out.sql);
          expect(parsed).toHaveLength(2);
          expect(parsed[0]).toMatchObject({
            kind: 'GrantStmt',
            objects: [[schema, table]],
            grantees: [granteeOf(role)],
          });
          expect(parsed[1]).toMatchObject({ kind: 'CommentStmt', object: { sval: role }, comment });
        },
      ),
      { numRuns: 300 },
    );
  });

  it('function argument text is either refused or parses as exactly one GRANT on the intended routine', () => {
    const hostile = fc.string({
      unit: fc.constantFrom(...'ab1_ $,.[]"\'();-/*\n'.split(''), ' integer', ' OUT ', 'TO x', '$$', '--'),
      maxLength: 24,
    });
    fc.assert(
      fc.property(hostile, (args) => {
        let sql: string;
        try {
          sql = renderSql(
            [
              {
                kind: 'grant',
                role: 'r',
                privileges: ['EXECUTE'],
                object_type: 'function',
                name: `f(${args})`,
                schema: 's',
              },
            ],
            { serverVersionNum: 160000, inventory: [], passwords: {} },
          ).sql;
        } catch (error) {
          expect(error).toBeInstanceOf(SqlRenderError);
          return;
        }
        let parsed: ReturnType<typeof parseStatements>;
        try {
          parsed = parseStatements(sql);
        } catch {
          return; // a syntax error is rejected by the server as a whole: nothing runs
        }
        expect(parsed).toHaveLength(1);
        expect(parsed[0]).toMatchObject({
          kind: 'GrantStmt',
          objtype: 'OBJECT_ROUTINE',
          objects: [['s', splitRoutineName(`f(${args})`).base]],
          grantees: [{ role: 'r' }],
        });
      }),
      { numRuns: 1000 },
    );
  });

  it('grouped with another routine, hostile argument text still parses as one GRANT on exactly both', () => {
    const hostile = fc.string({
      unit: fc.constantFrom(...'ab1_ $,.[]"\'();-/*\n'.split(''), ' integer', ' OUT ', 'TO x', '$$', '--'),
      maxLength: 24,
    });
    fc.assert(
      fc.property(hostile, (args) => {
        const grant = (name: string): Change => ({
          kind: 'grant',
          role: 'r',
          privileges: ['EXECUTE'],
          object_type: 'function',
          name,
          schema: 's',
        });
        let sql: string;
        try {
          sql = renderSql([grant(`f(${args})`), grant('g(integer)')], {
            serverVersionNum: 160000,
            inventory: [],
            passwords: {},
          }).sql;
        } catch (error) {
          expect(error).toBeInstanceOf(SqlRenderError);
          return;
        }
        let parsed: ReturnType<typeof parseStatements>;
        try {
          parsed = parseStatements(sql);
        } catch {
          return; // a syntax error is rejected by the server as a whole: nothing runs
        }
        expect(parsed).toHaveLength(1);
        expect(parsed[0]).toMatchObject({
          kind: 'GrantStmt',
          objtype: 'OBJECT_ROUTINE',
          objects: [
            ['s', splitRoutineName(`f(${args})`).base],
            ['s', 'g'],
          ],
          grantees: [{ role: 'r' }],
        });
      }),
      { numRuns: 1000 },
    );
  });
});
