// PostgreSQL 16+ membership syntax executed on real PostgreSQL 16 and 18 (embedded servers of the test
// matrix): per-edge INHERIT/ADMIN options and GRANTED BY for edges another grantor made.
import { createPostgresSandbox, sandboxId, type PostgresSandbox } from '@rolepolicy/testing';
import pg from 'pg';
import type { Change } from '../model/change.js';
import { renderSql } from './render.js';

const tag = sandboxId().slice(0, 6);
const team = `team "r" ${tag}`;
const m1 = `m'1 ${tag}`;
const m2 = `m2 ${tag}`;
const grantor = `gr\u00e4ntor ${tag}`;
const q = (name: string): string => `"${name.replaceAll('"', '""')}"`;

describe.each([{ major: 16 as const }, { major: 18 as const }])(
  'PG16+ membership statements on PostgreSQL $major',
  ({ major }) => {
    let sandbox: PostgresSandbox;
    let db: pg.Client;

    beforeAll(async () => {
      sandbox = await createPostgresSandbox(`render_pg${major}`, major);
      db = new pg.Client({ connectionString: sandbox.url });
      await db.connect();
      await db.query(`
        CREATE ROLE ${q(team)}; CREATE ROLE ${q(m1)}; CREATE ROLE ${q(m2)}; CREATE ROLE ${q(grantor)};
        GRANT ${q(team)} TO ${q(grantor)} WITH ADMIN TRUE;
        SET ROLE ${q(grantor)}; GRANT ${q(team)} TO ${q(m2)}; RESET ROLE;
      `);
    }, 60_000);

    afterAll(async () => {
      await db.query(`DROP ROLE IF EXISTS ${[m1, m2, grantor, team].map(q).join(', ')}`);
      await db.end();
      await sandbox.drop();
    });

    const run = async (changes: readonly Change[]): Promise<void> => {
      const rendered = renderSql(changes, {
        serverVersionNum: sandbox.serverVersionNum,
        inventory: [],
        passwords: {},
      });
      for (const statement of rendered.statements) await db.query(statement.sql);
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
          [team, member],
        )
      ).rows;

    it('add_member sets the per-edge INHERIT FALSE and ADMIN TRUE options', async () => {
      expect(Math.floor(sandbox.serverVersionNum / 10000)).toBe(major);
      await run([{ kind: 'add_member', role: team, member: m1, inherit: false, admin: true }]);
      expect(await edges(m1)).toEqual([{ grantor: 'postgres', admin_option: true, inherit_option: false }]);
    });

    it('remove_member without a grantor leaves an edge another grantor made (16+ only warns)', async () => {
      await run([{ kind: 'remove_member', role: team, member: m2, grantor: null }]);
      expect(await edges(m2)).toEqual([{ grantor, admin_option: false, inherit_option: true }]);
    });

    it('remove_member with the grantor renders GRANTED BY and removes that edge', async () => {
      await run([{ kind: 'remove_member', role: team, member: m2, grantor }]);
      expect(await edges(m2)).toEqual([]);
    });
  },
);
