// The privilege graph read on the real PostgreSQL (ADR 0021): attributes of each bundle role, and every
// role reached through pg_auth_members, predefined pg_* roles included, whatever the inherit option.

import { privilegedRoles, describePrivileged } from '@rolepolicy/policy';
import {
  createPostgresSandbox,
  postgresTargetLabel,
  postgresTargets,
  sandboxId,
  type PostgresSandbox,
} from '@rolepolicy/testing';

import { openConnection, type CatalogConnection } from './connection.js';
import { PrivilegeRepository } from './privilege.repository.js';
import { dropRolesWithPrefix, runSql } from './test-support/scope.js';

describe.each(postgresTargets())('privilege graph on PostgreSQL %s', (target) => {
  let sandbox: PostgresSandbox;
  let connection: CatalogConnection;
  const prefix = `rp_${sandboxId()}_`;
  const r = (name: string): string => `${prefix}${name}`;

  beforeAll(async () => {
    sandbox = await createPostgresSandbox('privilege', target);
    connection = openConnection({ url: sandbox.url });
    await runSql(
      sandbox.url,
      `CREATE ROLE "${r('plain')}" NOLOGIN;
       CREATE ROLE "${r('super')}" NOLOGIN SUPERUSER;
       CREATE ROLE "${r('rolemaker')}" NOLOGIN CREATEROLE;
       CREATE ROLE "${r('rls')}" NOLOGIN BYPASSRLS;
       CREATE ROLE "${r('repl')}" NOLOGIN REPLICATION;
       CREATE ROLE "${r('files')}" NOLOGIN NOINHERIT;
       CREATE ROLE "${r('mid')}" NOLOGIN;
       CREATE ROLE "${r('chained')}" NOLOGIN;
       GRANT pg_read_server_files TO "${r('files')}";
       GRANT "${r('super')}" TO "${r('mid')}";
       GRANT "${r('mid')}" TO "${r('chained')}";`,
    );
  }, 60_000);

  afterAll(async () => {
    await connection?.close();
    if (sandbox !== undefined) {
      await dropRolesWithPrefix(sandbox.adminUrl, [sandbox.url], prefix);
      await sandbox.drop();
    }
  });

  it(`[${postgresTargetLabel(target)}] reads attributes and the membership closure, and the pure check names each privileged role`, async () => {
    const bundle = ['plain', 'super', 'rolemaker', 'rls', 'repl', 'files', 'chained', 'missing'].map(r);
    const rows = await new PrivilegeRepository(connection.db).reachable(bundle);
    const byName = new Map(rows.map((row) => [row.name, row]));
    expect(byName.get(r('super'))).toMatchObject({ superuser: true, createrole: false });
    expect(byName.get(r('rolemaker'))).toMatchObject({ createrole: true, superuser: false });
    expect(byName.get(r('rls'))).toMatchObject({ bypassrls: true });
    expect(byName.get(r('repl'))).toMatchObject({ replication: true });
    expect(byName.get(r('files'))?.member_of).toEqual(['pg_read_server_files']);
    expect(byName.has('pg_read_server_files')).toBe(true);
    expect(byName.has(r('missing'))).toBe(false);

    const findings = privilegedRoles(
      bundle,
      rows.map((row) => ({ ...row, memberOf: row.member_of })),
    );
    expect(findings.map(describePrivileged).sort()).toEqual(
      [
        `role ${r('chained')} is a member of ${r('super')}, which has SUPERUSER (through ${r('chained')} -> ${r('mid')} -> ${r('super')})`,
        `role ${r('files')} is a member of pg_read_server_files, which is a predefined role`,
        `role ${r('rls')} has BYPASSRLS`,
        `role ${r('repl')} has REPLICATION`,
        `role ${r('rolemaker')} has CREATEROLE`,
        `role ${r('super')} has SUPERUSER`,
      ].sort(),
    );
    expect(findings.some((f) => f.role === r('plain'))).toBe(false);
  });
});
