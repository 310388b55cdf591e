import { createHash } from 'node:crypto';
import type { Change } from '../model/change.js';
import type { InventoryObject } from '../model/snapshot.js';
import type { ObjectType } from '../model/vocabulary.js';
import { renderSql } from './render.js';
import { SqlRenderError } from './errors.js';
import type { SqlContext } from './types.js';

const VERIFIER = 'SCRAM-SHA-256$4096:c2FsdHNhbHRzYWx0c2FsdA==$c3RvcmVk:c2VydmVy';

function ctx(overrides: Partial<SqlContext> = {}): SqlContext {
  return { serverVersionNum: 150004, inventory: [], passwords: {}, ...overrides };
}

function sqlOf(changes: readonly Change[], context: SqlContext = ctx()): readonly string[] {
  return renderSql(changes, context).statements.map((s) => s.sql);
}

/** One statement per object and grantee, as the changes expand (before grouping). */
function perObjectSqlOf(changes: readonly Change[], context: SqlContext = ctx()): readonly string[] {
  return renderSql(changes, context, { statements: 'per_object' }).statements.map((s) => s.sql);
}

const inv = (kind: InventoryObject['kind'], schema: string, name: string): InventoryObject => ({
  kind,
  schema,
  name,
  owner: 'owner',
});

describe('renderSql: identifiers and literals', () => {
  it('quotes every identifier and doubles embedded double quotes', () => {
    expect(sqlOf([{ kind: 'drop_role', name: 'a"b' }])).toEqual(['DROP ROLE IF EXISTS "a""b";']);
  });

  it('renders only the exact grantee PUBLIC bare; "PUBLIC" (with quotes) is an ordinary role', () => {
    const grant = (role: string): Change => ({
      kind: 'grant',
      role,
      privileges: ['USAGE'],
      object_type: 'schema',
      name: 'app',
      schema: null,
    });
    expect(sqlOf([grant('PUBLIC'), grant('"PUBLIC"'), grant('Public')])).toEqual([
      'GRANT USAGE ON SCHEMA "app" TO PUBLIC, """PUBLIC""", "Public";',
    ]);
    expect(perObjectSqlOf([grant('PUBLIC'), grant('"PUBLIC"'), grant('Public')])).toEqual([
      'GRANT USAGE ON SCHEMA "app" TO PUBLIC;',
      'GRANT USAGE ON SCHEMA "app" TO """PUBLIC""";',
      'GRANT USAGE ON SCHEMA "app" TO "Public";',
    ]);
  });

  it('refuses the role name public in any role position: PostgreSQL reads even "public" as PUBLIC', () => {
    const grant: Change = {
      kind: 'grant',
      role: 'public',
      privileges: ['USAGE'],
      object_type: 'schema',
      name: 'app',
      schema: null,
    };
    expect(() => sqlOf([grant])).toThrow(/reserved/);
    expect(() =>
      sqlOf([{ kind: 'add_member', role: 'r', member: 'public', inherit: true, admin: false }]),
    ).toThrow(SqlRenderError);
    expect(() => sqlOf([{ kind: 'drop_role', name: 'none' }])).toThrow(SqlRenderError);
  });

  it('doubles single quotes in literals and leaves backslashes alone (standard_conforming_strings)', () => {
    expect(sqlOf([{ kind: 'set_comment', name: 'r', comment: "it's a \\path" }])).toEqual([
      "COMMENT ON ROLE \"r\" IS 'it''s a \\path';",
    ]);
  });

  it('refuses empty identifiers and NUL characters instead of sending them to the server', () => {
    expect(() => sqlOf([{ kind: 'drop_role', name: '' }])).toThrow(SqlRenderError);
    expect(() => sqlOf([{ kind: 'drop_role', name: 'a\0b' }])).toThrow(SqlRenderError);
  });
});

describe('renderSql: roles', () => {
  const state = {
    login: true,
    superuser: false,
    createdb: false,
    createrole: false,
    inherit: true,
    replication: false,
    bypassrls: false,
    connection_limit: -1,
    comment: null,
    password_valid_until: null,
  };

  it('create_role spells every attribute and adds the comment as its own statement', () => {
    expect(
      sqlOf([
        {
          kind: 'create_role',
          name: 'app',
          state: {
            ...state,
            connection_limit: 5,
            comment: 'App',
            password_valid_until: '2030-01-01T00:00:00Z',
          },
        },
      ]),
    ).toEqual([
      `CREATE ROLE "app" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE INHERIT NOREPLICATION NOBYPASSRLS CONNECTION LIMIT 5 VALID UNTIL '2030-01-01T00:00:00Z';`,
      `COMMENT ON ROLE "app" IS 'App';`,
    ]);
  });

  it('alter_role renders non-config attributes in one statement, null expiry as infinity, then one per config entry', () => {
    expect(
      sqlOf([
        {
          kind: 'alter_role',
          name: 'app',
          attributes: [
            { kind: 'login', value: false },
            { kind: 'set_config', parameter: 'search_path', value: 'a, "My Schema", "$user"' },
            { kind: 'valid_until', value: null },
            { kind: 'set_config', parameter: 'app.tenant', value: "o'neil" },
            { kind: 'reset_config', parameter: 'work_mem' },
            { kind: 'connection_limit', value: 3 },
          ],
        },
      ]),
    ).toEqual([
      `ALTER ROLE "app" NOLOGIN VALID UNTIL 'infinity' CONNECTION LIMIT 3;`,
      `ALTER ROLE "app" SET "search_path" = 'a', 'My Schema', '$user';`,
      `ALTER ROLE "app" SET "app.tenant" = 'o''neil';`,
      `ALTER ROLE "app" RESET "work_mem";`,
    ]);
  });

  it('a list GUC with an empty value renders one empty literal; a quoted element keeps its comma', () => {
    expect(
      sqlOf([
        {
          kind: 'alter_role',
          name: 'r',
          attributes: [
            { kind: 'set_config', parameter: 'search_path', value: '' },
            { kind: 'set_config', parameter: 'temp_tablespaces', value: '"a, b"' },
          ],
        },
      ]),
    ).toEqual([`ALTER ROLE "r" SET "search_path" = '';`, `ALTER ROLE "r" SET "temp_tablespaces" = 'a, b';`]);
  });

  it('set_comment null clears the comment', () => {
    expect(sqlOf([{ kind: 'set_comment', name: 'r', comment: null }])).toEqual([
      'COMMENT ON ROLE "r" IS NULL;',
    ]);
  });
});

describe('renderSql: passwords', () => {
  const change: Change = { kind: 'set_password', name: 'app', password_source: 'app-secret:password:7' };

  it('sets the verifier and keeps a redacted twin that never contains it', () => {
    const out = renderSql([change], ctx({ passwords: { app: VERIFIER } }));
    expect(out.statements).toEqual([
      {
        sql: `ALTER ROLE "app" PASSWORD '${VERIFIER}';`,
        redacted: `ALTER ROLE "app" PASSWORD '[REDACTED]';`,
        changeIndex: 0,
        changeIndices: [0],
      },
    ]);
    expect(out.redactedSql).not.toContain('SCRAM');
    expect(out.redactedSqlHash).not.toBe(out.sqlHash);
  });

  it('a set_password whose verifier is missing is an error naming the role', () => {
    expect(() => renderSql([change], ctx())).toThrow(/role "app"/);
    try {
      renderSql([change], ctx());
    } catch (error) {
      expect(error).toBeInstanceOf(SqlRenderError);
      expect((error as SqlRenderError).code).toBe('missing_verifier');
      expect((error as SqlRenderError).changeIndex).toBe(0);
    }
  });

  it('refuses anything that is not a SCRAM verifier (cleartext never reaches SQL) without echoing it', () => {
    expect(() => renderSql([change], ctx({ passwords: { app: 'hunter2' } }))).toThrow(SqlRenderError);
    try {
      renderSql([change], ctx({ passwords: { app: 'hunter2' } }));
    } catch (error) {
      expect(String((error as Error).message)).not.toContain('hunter2');
    }
  });

  it('does not take a verifier from the object prototype', () => {
    const c: Change = { kind: 'set_password', name: 'constructor', password_source: 's:k:1' };
    expect(() => renderSql([c], ctx())).toThrow(/missing|no password verifier/);
  });
});

describe('renderSql: grants and wildcards', () => {
  const grant = (object_type: ObjectType, schema: string | null, name: string | null): Change => ({
    kind: 'grant',
    role: 'reader',
    privileges: ['SELECT', 'DELETE', 'SELECT'],
    object_type,
    name,
    schema,
  });

  it('orders and de-duplicates privileges canonically', () => {
    expect(sqlOf([grant('table', 's', 't')])).toEqual(['GRANT DELETE, SELECT ON TABLE "s"."t" TO "reader";']);
  });

  it('expands relation wildcards per object of the exact relkind, never ALL TABLES IN SCHEMA', () => {
    const inventory = [
      inv('table', 's', 'b'),
      inv('table', 's', 'a'),
      inv('view', 's', 'v'),
      inv('materialized_view', 's', 'm'),
      inv('table', 'other', 'x'),
    ];
    const changes = [grant('table', 's', '*'), grant('view', 's', '*'), grant('materialized_view', 's', '*')];
    expect(sqlOf(changes, ctx({ inventory }))).toEqual([
      'GRANT DELETE, SELECT ON TABLE "s"."a", "s"."b", "s"."v", "s"."m" TO "reader";',
    ]);
    expect(perObjectSqlOf(changes, ctx({ inventory }))).toEqual([
      'GRANT DELETE, SELECT ON TABLE "s"."a" TO "reader";',
      'GRANT DELETE, SELECT ON TABLE "s"."b" TO "reader";',
      'GRANT DELETE, SELECT ON TABLE "s"."v" TO "reader";',
      'GRANT DELETE, SELECT ON TABLE "s"."m" TO "reader";',
    ]);
  });

  it('expands type wildcards per object (PostgreSQL has no ALL TYPES IN SCHEMA)', () => {
    const inventory = [inv('type', 's', 'mood'), inv('type', 's', 'addr')];
    const changes = [{ ...grant('type', 's', '*'), privileges: ['USAGE'] } as Change];
    expect(sqlOf(changes, ctx({ inventory }))).toEqual([
      'GRANT USAGE ON TYPE "s"."addr", "s"."mood" TO "reader";',
    ]);
    expect(perObjectSqlOf(changes, ctx({ inventory }))).toEqual([
      'GRANT USAGE ON TYPE "s"."addr" TO "reader";',
      'GRANT USAGE ON TYPE "s"."mood" TO "reader";',
    ]);
  });

  it('an empty relation wildcard scope renders no statement', () => {
    expect(sqlOf([grant('table', 's', '*')])).toEqual([]);
  });

  it('uses ALL SEQUENCES / ALL ROUTINES IN SCHEMA where they are exact', () => {
    expect(sqlOf([grant('sequence', 's', '*'), grant('function', 's', '*')])).toEqual([
      'GRANT DELETE, SELECT ON ALL SEQUENCES IN SCHEMA "s" TO "reader";',
      'GRANT DELETE, SELECT ON ALL ROUTINES IN SCHEMA "s" TO "reader";',
    ]);
  });

  it('renders single objects by kind: database, schema, sequence, type, routine', () => {
    expect(
      perObjectSqlOf([
        grant('database', null, 'app_db'),
        grant('schema', null, 'app'),
        grant('sequence', 's', 'seq'),
        grant('type', 's', 'mood'),
        grant('function', 's', 'f(p_id integer, OUT x text, VARIADIC rest integer[])'),
        grant('function', 's', 'weird(name(integer)'),
      ]),
    ).toEqual([
      'GRANT DELETE, SELECT ON DATABASE "app_db" TO "reader";',
      'GRANT DELETE, SELECT ON SCHEMA "app" TO "reader";',
      'GRANT DELETE, SELECT ON SEQUENCE "s"."seq" TO "reader";',
      'GRANT DELETE, SELECT ON TYPE "s"."mood" TO "reader";',
      'GRANT DELETE, SELECT ON ROUTINE "s"."f"(p_id integer, OUT x text, VARIADIC rest integer[]) TO "reader";',
      'GRANT DELETE, SELECT ON ROUTINE "s"."weird(name"(integer) TO "reader";',
    ]);
    expect(
      sqlOf([
        grant('function', 's', 'f(p_id integer, OUT x text, VARIADIC rest integer[])'),
        grant('function', 's', 'weird(name(integer)'),
      ]),
    ).toEqual([
      'GRANT DELETE, SELECT ON ROUTINE "s"."f"(p_id integer, OUT x text, VARIADIC rest integer[]), "s"."weird(name"(integer) TO "reader";',
    ]);
  });

  it('never defaults a missing schema', () => {
    expect(() => sqlOf([grant('table', null, 't')])).toThrow(/must name a schema/);
  });

  it.each([
    'f(integer); DROP TABLE x',
    'f(integer) TO x; --)',
    'f(integer /* c */)',
    'f("unbalanced)',
    'f($$)',
    "f('x')",
    'f(integer',
    // Conservative by design: a `;` is refused even inside a quoted type name.
    'f("weird;type")',
  ])('rejects a function key whose argument text is not a plausible identity-argument list: %s', (name) => {
    expect(() => sqlOf([grant('function', 's', name)])).toThrow(SqlRenderError);
  });

  it.each([
    'f()',
    'f(character varying, timestamp with time zone, double precision[])',
    'f(VARIADIC "any")',
    'f(INOUT "my arg" "char", OUT x public.hstore)',
    'f("weird(type")',
    'f(p$1 integer)',
  ])('accepts identity-argument lists PostgreSQL actually prints: %s', (name) => {
    expect(sqlOf([grant('function', 's', name)])).toHaveLength(1);
  });

  it('revoke with a foreign grantor runs as that grantor and returns to the executor', () => {
    const revoke: Change = {
      kind: 'revoke',
      role: 'reader',
      privileges: ['SELECT'],
      object_type: 'table',
      name: 't',
      schema: 's',
      grantor: 'granter',
    };
    expect(sqlOf([revoke])).toEqual([
      'SET ROLE "granter";',
      'REVOKE SELECT ON TABLE "s"."t" FROM "reader";',
      'RESET ROLE;',
    ]);
    expect(sqlOf([revoke], ctx({ executorRole: 'rolepolicy' }))[2]).toBe('SET ROLE "rolepolicy";');
  });
});

describe('renderSql: memberships by server version', () => {
  const add = (inherit: boolean, admin: boolean): Change => ({
    kind: 'add_member',
    role: 'r',
    member: 'm',
    inherit,
    admin,
  });
  const remove: Change = { kind: 'remove_member', role: 'r', member: 'm', grantor: 'g' };

  it('PG16+ uses WITH INHERIT TRUE|FALSE[, ADMIN TRUE] and GRANTED BY for foreign grantors', () => {
    expect(sqlOf([add(true, false), add(false, true), remove], ctx({ serverVersionNum: 160002 }))).toEqual([
      'GRANT "r" TO "m" WITH INHERIT TRUE;',
      'GRANT "r" TO "m" WITH INHERIT FALSE, ADMIN TRUE;',
      'REVOKE "r" FROM "m" GRANTED BY "g";',
    ]);
  });

  it('PG15 uses WITH ADMIN OPTION and no per-edge inherit or grantor', () => {
    expect(sqlOf([add(false, false), add(true, true), remove], ctx({ serverVersionNum: 150020 }))).toEqual([
      'GRANT "r" TO "m";',
      'GRANT "r" TO "m" WITH ADMIN OPTION;',
      'REVOKE "r" FROM "m";',
    ]);
  });
});

describe('renderSql: default privileges, schemas, retirement', () => {
  it('renders schema-scoped and global defaults (global without IN SCHEMA)', () => {
    expect(
      sqlOf([
        {
          kind: 'set_default_privilege',
          owner: 'o',
          scope: { type: 'schema', schema: 's' },
          on_type: 'function',
          grantee: 'g',
          privileges: ['EXECUTE'],
        },
        {
          kind: 'revoke_default_privilege',
          owner: 'o',
          scope: { type: 'global' },
          on_type: 'schema',
          grantee: 'PUBLIC',
          privileges: ['USAGE'],
        },
      ]),
    ).toEqual([
      'ALTER DEFAULT PRIVILEGES FOR ROLE "o" IN SCHEMA "s" GRANT EXECUTE ON ROUTINES TO "g";',
      'ALTER DEFAULT PRIVILEGES FOR ROLE "o" REVOKE USAGE ON SCHEMAS FROM PUBLIC;',
    ]);
  });

  it.each(['view', 'materialized_view', 'database'] as const)(
    'refuses default privileges on %s',
    (on_type) => {
      expect(() =>
        sqlOf([
          {
            kind: 'set_default_privilege',
            owner: 'o',
            scope: { type: 'global' },
            on_type,
            grantee: 'g',
            privileges: ['SELECT'],
          },
        ]),
      ).toThrow(SqlRenderError);
    },
  );

  it('renders schema creation, owner transfer and owner privileges', () => {
    expect(
      sqlOf([
        { kind: 'create_schema', name: 's', owner: 'o' },
        { kind: 'create_schema', name: 't', owner: null },
        { kind: 'alter_schema_owner', name: 's', owner: 'p' },
        { kind: 'ensure_schema_owner_privileges', name: 's', owner: 'p', privileges: ['USAGE', 'CREATE'] },
      ]),
    ).toEqual([
      'CREATE SCHEMA "s" AUTHORIZATION "o";',
      'CREATE SCHEMA "t";',
      'ALTER SCHEMA "s" OWNER TO "p";',
      'GRANT CREATE, USAGE ON SCHEMA "s" TO "p";',
    ]);
  });

  it('renders retirement statements', () => {
    expect(
      sqlOf([
        { kind: 'reassign_owned', from_role: 'old', to_role: 'new' },
        { kind: 'drop_owned', role: 'old' },
        { kind: 'terminate_sessions', role: "o'ld" },
        { kind: 'drop_role', name: 'old' },
      ]),
    ).toEqual([
      'REASSIGN OWNED BY "old" TO "new";',
      'DROP OWNED BY "old";',
      "SELECT pg_catalog.pg_terminate_backend(pid) FROM pg_catalog.pg_stat_activity WHERE usename = 'o''ld' AND pid <> pg_catalog.pg_backend_pid();",
      'DROP ROLE IF EXISTS "old";',
    ]);
  });
});

describe('renderSql: statement list and hashes', () => {
  it('numbers statements by change, counts them after expansion and hashes the joined SQL', () => {
    const inventory = [inv('table', 's', 'a'), inv('table', 's', 'b')];
    const changes: Change[] = [
      { kind: 'drop_owned', role: 'x' },
      { kind: 'grant', role: 'r', privileges: ['SELECT'], object_type: 'table', name: '*', schema: 's' },
    ];
    const perObject = renderSql(changes, ctx({ inventory }), { statements: 'per_object' });
    expect(perObject.statements.map((s) => s.changeIndex)).toEqual([0, 1, 1]);
    expect(perObject.statementCount).toBe(3);
    const out = renderSql(changes, ctx({ inventory }));
    expect(out.statements.map((s) => s.changeIndices)).toEqual([[0], [1]]);
    expect(out.statementCount).toBe(2);
    expect(out.sql).toBe(out.statements.map((s) => s.sql).join('\n'));
    expect(out.sqlHash).toBe(createHash('sha256').update(out.sql).digest('hex'));
    expect(out.sqlHash).toMatch(/^[0-9a-f]{64}$/);
    expect(out.redactedSqlHash).toBe(out.sqlHash);
  });
});
