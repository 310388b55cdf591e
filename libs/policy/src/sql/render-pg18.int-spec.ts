// PostgreSQL 16+ membership syntax executed on a real PostgreSQL 18 (PGlite, in-process WebAssembly; the local
// server is 15): per-edge INHERIT/ADMIN options and GRANTED BY for edges another grantor made.
import { PGlite } from '@electric-sql/pglite';
import type { Change } from '../model/change.js';
import { renderSql } from './render.js';

describe('PG16+ membership statements on PostgreSQL 18', () => {
  let db: PGlite;
  let version: number;

  beforeAll(async () => {
    db = await PGlite.create();
    version = Number(
      (await db.query<{ v: string }>("SELECT current_setting('server_version_num') AS v")).rows[0]!.v,
    );
    await db.exec(`
      CREATE ROLE "team ""r"""; CREATE ROLE "m'1"; CREATE ROLE "m2"; CREATE ROLE "gr\u00e4ntor";
      GRANT "team ""r""" TO "gr\u00e4ntor" WITH ADMIN TRUE;
      SET ROLE "gr\u00e4ntor"; GRANT "team ""r""" TO "m2"; RESET ROLE;
    `);
  });

  afterAll(async () => {
    await db.close();
  });

  const run = async (changes: readonly Change[]): Promise<void> => {
    for (const statement of renderSql(changes, { serverVersionNum: version, inventory: [], passwords: {} })
      .statements) {
      await db.exec(statement.sql);
    }
  };

  const edges = async (member: string) =>
    (
      await db.query<{ grantor: string; admin_option: boolean; inherit_option: boolean }>(
        `SELECT g.rolname AS grantor, m.admin_option, m.inherit_option
           FROM pg_auth_members m
           JOIN pg_roles r ON r.oid = m.roleid
           JOIN pg_roles u ON u.oid = m.member
           JOIN pg_roles g ON g.oid = m.grantor
          WHERE r.rolname = $1 AND u.rolname = $2`,
        ['team "r"', member],
      )
    ).rows;

  it('add_member sets the per-edge INHERIT FALSE and ADMIN TRUE options', async () => {
    expect(version).toBeGreaterThanOrEqual(160000);
    await run([{ kind: 'add_member', role: 'team "r"', member: "m'1", inherit: false, admin: true }]);
    expect(await edges("m'1")).toEqual([{ grantor: 'postgres', admin_option: true, inherit_option: false }]);
  });

  it('remove_member without a grantor leaves an edge another grantor made (16+ only warns)', async () => {
    await run([{ kind: 'remove_member', role: 'team "r"', member: 'm2', grantor: null }]);
    expect(await edges('m2')).toEqual([
      { grantor: 'gr\u00e4ntor', admin_option: false, inherit_option: true },
    ]);
  });

  it('remove_member with the grantor renders GRANTED BY and removes that edge', async () => {
    await run([{ kind: 'remove_member', role: 'team "r"', member: 'm2', grantor: 'gr\u00e4ntor' }]);
    expect(await edges('m2')).toEqual([]);
  });
});
