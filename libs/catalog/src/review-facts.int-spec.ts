// readReviewFacts against the real server: the executor's membership edges (as the SET ROLE executor),
// and the dependencies of a role to drop (owned objects, privileges, sessions, memberships).
import {
  createPostgresSandbox,
  DEFAULT_PG_ADMIN_URL,
  sandboxId,
  type PostgresSandbox,
} from '@rolepolicy/testing';
import pg from 'pg';

import { openConnection } from './connection.js';
import { readReviewFacts } from './review-facts.js';
import { dropRolesWithPrefix, runSql } from './test-support/scope.js';

let sandbox: PostgresSandbox;
const p = `rp_${sandboxId()}_`;
const r = (name: string): string => `${p}${name}`;

beforeAll(async () => {
  sandbox = await createPostgresSandbox('facts');
  await runSql(
    sandbox.url,
    [
      `CREATE ROLE "${r('exec')}" LOGIN CREATEROLE`,
      `CREATE ROLE "${r('mid')}" NOLOGIN NOINHERIT`,
      `CREATE ROLE "${r('top')}" NOLOGIN`,
      `CREATE ROLE "${r('other')}" NOLOGIN`,
      `GRANT "${r('mid')}" TO "${r('exec')}"`,
      `GRANT "${r('top')}" TO "${r('mid')}" WITH ADMIN OPTION`,
      `GRANT "${r('other')}" TO "${r('top')}"`,
      `CREATE ROLE "${r('su')}" SUPERUSER NOLOGIN`,
      `GRANT "${r('top')}" TO "${r('su')}"`,
      `CREATE ROLE "${r('tenant_b_group')}" NOLOGIN`,
      `CREATE ROLE "${r('tenant_b_app')}" LOGIN`,
      `GRANT "${r('tenant_b_group')}" TO "${r('tenant_b_app')}"`,
      `CREATE ROLE "${r('gone')}" LOGIN`,
      `GRANT "${r('other')}" TO "${r('gone')}"`,
      `CREATE TABLE public."${r('owned')}" (id int)`,
      `ALTER TABLE public."${r('owned')}" OWNER TO "${r('gone')}"`,
      `CREATE TABLE public."${r('granted')}" (id int)`,
      `GRANT SELECT ON public."${r('granted')}" TO "${r('gone')}"`,
    ].join(';'),
  );
});

afterAll(async () => {
  await dropRolesWithPrefix(DEFAULT_PG_ADMIN_URL, [sandbox.url], p);
  await sandbox.drop();
});

describe('readReviewFacts', () => {
  it("reads every edge on the executor's membership closure, with PG15 inherit from the member's rolinherit", async () => {
    const connection = openConnection({ url: sandbox.url, setRole: r('exec') });
    try {
      const facts = await readReviewFacts(connection.db, [], 150000);
      expect(facts.executor_memberships).toEqual([
        { role: r('mid'), member: r('exec'), inherit: true, admin: false, grantor: null },
        { role: r('other'), member: r('top'), inherit: true, admin: false, grantor: null },
        { role: r('top'), member: r('mid'), inherit: false, admin: true, grantor: null },
      ]);
      expect(facts.drop_roles).toEqual([]);
    } finally {
      await connection.close();
    }
  });

  it("a superuser executor reads only the edges upward from itself, never the server's other memberships", async () => {
    // pg_has_role(superuser, any role, 'MEMBER') holds: that test returned every membership of the server
    // (another tenant's roles in this tenant's review artifact, ADR 0028).
    const connection = openConnection({ url: sandbox.url, setRole: r('su') });
    try {
      const facts = await readReviewFacts(connection.db, [], 150000);
      expect(facts.executor_memberships).toEqual([
        { role: r('other'), member: r('top'), inherit: true, admin: false, grantor: null },
        { role: r('top'), member: r('su'), inherit: true, admin: false, grantor: null },
      ]);
      const named = facts.executor_memberships.flatMap((e) => [e.role, e.member]);
      expect(named).not.toContain(r('tenant_b_group'));
      expect(named).not.toContain(r('exec'));
    } finally {
      await connection.close();
    }
  });

  it('counts what a role to drop owns and holds, its sessions and memberships, with examples', async () => {
    const asGone = new URL(sandbox.url);
    asGone.username = r('gone');
    const session = new pg.Client({ connectionString: asGone.toString() });
    await session.connect();
    const connection = openConnection({ url: sandbox.url });
    try {
      const facts = await readReviewFacts(
        connection.db,
        [
          { kind: 'drop_role', name: r('gone') },
          { kind: 'add_member', role: 'pg_monitor', member: r('gone'), inherit: true, admin: false },
          { kind: 'add_member', role: 'pg_not_a_role', member: r('gone'), inherit: true, admin: false },
        ],
        150000,
      );
      expect(facts.drop_roles).toEqual([
        {
          role: r('gone'),
          owned_current: 1,
          owned_shared: 0,
          owned_other: 0,
          acl_current: 1,
          acl_other: 0,
          sessions: 1,
          // Schema-qualified whatever search_path the database sets: the session pins pg_catalog (ADR 0023).
          examples: [`table public.${r('granted')}`, `table public.${r('owned')}`],
          member_of: [r('other')],
          members: [],
        },
      ]);
      expect(facts.predefined_roles).toEqual(['pg_monitor']);
    } finally {
      await session.end();
      await connection.close();
    }
  });
});
