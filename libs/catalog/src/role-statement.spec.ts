// Which statements take the server's role lock (ADR 0027): those writing the server-wide role catalogs.
import { isRoleStatement, roleNamesOf } from './execute.js';

describe('isRoleStatement', () => {
  it.each([
    'CREATE ROLE "app" LOGIN',
    'ALTER ROLE "app" PASSWORD \'x\'',
    'DROP ROLE IF EXISTS "app"',
    'COMMENT ON ROLE "app" IS \'App\'',
    'GRANT "reader" TO "app"',
    'GRANT "reader" TO "app" WITH INHERIT TRUE, SET FALSE GRANTED BY "admin"',
    'REVOKE ADMIN OPTION FOR "reader" FROM "app"',
    // A role whose quoted name reads like an object clause is still a role grant.
    'GRANT "x ON y" TO "app"',
  ])('%s is role DDL', (text) => {
    expect(isRoleStatement(text)).toBe(true);
  });

  it.each([
    'GRANT USAGE ON SCHEMA "s" TO "app"',
    'REVOKE SELECT ON ALL TABLES IN SCHEMA "s" FROM "app"',
    'GRANT CONNECT ON DATABASE "d" TO "app"',
    'ALTER DEFAULT PRIVILEGES FOR ROLE "o" IN SCHEMA "s" GRANT SELECT ON TABLES TO "app"',
    'CREATE SCHEMA "s" AUTHORIZATION "o"',
    'ALTER SCHEMA "s" OWNER TO "o"',
    'REASSIGN OWNED BY "a" TO "b"',
    'DROP OWNED BY "a"',
    'SELECT pg_advisory_xact_lock(1)',
  ])('%s is not', (text) => {
    expect(isRoleStatement(text)).toBe(false);
  });
});

describe('roleNamesOf: the role lock keys of a plan (ADR 0027)', () => {
  it('names every role, member and grantor of role statements, unescaped, sorted, once', () => {
    expect(
      roleNamesOf([
        'CREATE ROLE "app" NOLOGIN;',
        'GRANT "app" TO "a""b" WITH ADMIN OPTION GRANTED BY "owner";',
        'GRANT USAGE ON SCHEMA "s" TO "app";',
        'ALTER ROLE "app" PASSWORD \'SCRAM-SHA-256$"not-a-name"\';',
        'REVOKE "app" FROM "x";',
      ]),
    ).toEqual(['a"b', 'app', 'owner', 'x']);
  });

  it('is empty for a plan without role statements (no lock taken)', () => {
    expect(roleNamesOf(['GRANT SELECT ON TABLE "s"."t" TO "app";', 'CREATE SCHEMA "s";'])).toEqual([]);
  });
});
