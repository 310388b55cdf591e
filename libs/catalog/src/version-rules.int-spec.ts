// Every version-dependent rule on the oldest and newest real server it concerns (docs/postgres-versions.md),
// checked by catalog facts after applying, not by SQL text: per-membership inherit (a blocker before 16,
// stored per edge on 16+), membership grantors on 16+, and MAINTAIN in ACLs on 17+.
// These run on embedded servers of fixed majors whatever PG_MAJORS says.

import {
  computePlan,
  deriveManagedScope,
  expandPolicy,
  renderSql,
  type PolicyContent,
  type PlanResult,
} from '@rolepolicy/policy';
import {
  createPostgresSandbox,
  sandboxId,
  type EmbeddedPostgresMajor,
  type PostgresSandbox,
} from '@rolepolicy/testing';
import pg from 'pg';

import { openConnection } from './connection.js';
import { executeStatements } from './execute.js';
import { inspect } from './inspect.js';
import { dropRolesWithPrefix, runSql } from './test-support/scope.js';

const prefix = `vr_${sandboxId()}_`;
const r = (name: string): string => `${prefix}${name}`;

/** Plans `content` on `url` (optionally as `setRole`); applies the plan when `apply` is set. */
async function planOn(
  url: string,
  content: PolicyContent,
  setRole: string | undefined,
  apply: boolean,
): Promise<PlanResult> {
  const expansion = expandPolicy(content, { policyName: 'rules' });
  if (!expansion.ok) throw new Error(JSON.stringify(expansion.errors));
  const connection = openConnection({ url, ...(setRole === undefined ? {} : { setRole }) });
  try {
    const snapshot = await inspect(connection.db, deriveManagedScope(expansion.desired), null);
    const result = computePlan({
      desired: expansion.desired,
      snapshot,
      mode: 'authoritative',
      passwordSources: {},
      appliedPasswordSourceVersions: {},
      allowSchemaOwnerTransfers: false,
    });
    if (!apply) return result;
    if (result.blockers.length > 0) throw new Error(`blocked: ${result.blockers.join('; ')}`);
    const rendered = renderSql(result.changes, {
      serverVersionNum: snapshot.server_version_num,
      inventory: snapshot.inventory,
      passwords: {},
      executorRole: snapshot.executor.role,
    });
    await executeStatements(connection.db, rendered.statements);
    return result;
  } finally {
    await connection.close();
  }
}

const plan = (url: string, content: PolicyContent, setRole?: string) => planOn(url, content, setRole, false);

/** Plans and applies `content` once (failing on blockers), then returns the next plan. */
async function applyOnce(url: string, content: PolicyContent, setRole?: string): Promise<PlanResult> {
  await planOn(url, content, setRole, true);
  return plan(url, content, setRole);
}

async function rows<T extends Record<string, unknown>>(url: string, text: string, params: unknown[] = []) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, params)).rows;
  } finally {
    await client.end();
  }
}

const edgesOf = (url: string, role: string) =>
  rows<{ member: string; grantor: string; inherit: boolean; admin: boolean }>(
    url,
    `SELECT u.rolname AS member, g.rolname AS grantor, m.inherit_option AS inherit, m.admin_option AS admin
       FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.roleid JOIN pg_roles u ON u.oid = m.member
       JOIN pg_roles g ON g.oid = m.grantor
      WHERE r.rolname = $1 ORDER BY 1, 2`,
    [role],
  );

function onServers(majors: readonly EmbeddedPostgresMajor[], body: (get: () => PostgresSandbox) => void) {
  describe.each(majors.map((major) => ({ major })))('on PostgreSQL $major', ({ major }) => {
    let sandbox: PostgresSandbox;
    beforeAll(async () => {
      sandbox = await createPostgresSandbox(`rules_${major}`, major);
    }, 60_000);
    afterAll(async () => {
      await dropRolesWithPrefix(sandbox.adminUrl, [sandbox.url], prefix);
      await sandbox.drop();
    });
    body(() => sandbox);
  });
}

const noInheritEdge = (): PolicyContent => ({
  roles: [{ name: r('group') }, { name: r('app') }],
  memberships: [{ role: r('group'), members: [{ name: r('app'), inherit: false }] }],
});

describe('per-membership inherit before PostgreSQL 16 is a plan-time blocker', () => {
  onServers([14, 15], (sandbox) => {
    it('inherit: false on a member that inherits refuses the plan, and nothing is created', async () => {
      const result = await plan(sandbox().url, noInheritEdge());
      expect(result.blockers).toEqual([
        expect.stringContaining(
          `membership ${r('group')} -> ${r('app')} declares inherit: false, but PostgreSQL ${Math.floor(sandbox().serverVersionNum / 10000)} has no per-membership inherit option`,
        ),
      ]);
      expect(await rows(sandbox().url, 'SELECT 1 FROM pg_roles WHERE rolname = $1', [r('app')])).toEqual([]);
    });

    it('declaring the member NOINHERIT instead converges: the edge does not inherit', async () => {
      const content: PolicyContent = {
        ...noInheritEdge(),
        roles: [{ name: r('group') }, { name: r('app'), inherit: false }],
      };
      expect((await applyOnce(sandbox().url, content)).changes).toEqual([]);
      expect(
        await rows(
          sandbox().url,
          `SELECT pg_has_role($1, $2, 'USAGE') AS usage, pg_has_role($1, $2, 'MEMBER') AS member`,
          [r('app'), r('group')],
        ),
      ).toEqual([{ usage: false, member: true }]);
    });
  });
});

describe('per-membership inherit on PostgreSQL 16+ is stored per edge', () => {
  onServers([16, 18], (sandbox) => {
    it('inherit: false on an inheriting member is applied once and the edge has inherit_option false', async () => {
      expect((await applyOnce(sandbox().url, noInheritEdge())).changes).toEqual([]);
      expect(await edgesOf(sandbox().url, r('group'))).toEqual([
        { member: r('app'), grantor: 'postgres', inherit: false, admin: false },
      ]);
      expect(
        await rows(sandbox().url, `SELECT rolinherit FROM pg_roles WHERE rolname = $1`, [r('app')]),
      ).toEqual([{ rolinherit: true }]);
      expect(
        await rows(sandbox().url, `SELECT pg_has_role($1, $2, 'USAGE') AS usage`, [r('app'), r('group')]),
      ).toEqual([{ usage: false }]);
    });
  });
});

describe('membership grantors on PostgreSQL 16+', () => {
  onServers([16, 18], (sandbox) => {
    const content = (): PolicyContent => ({
      roles: [{ name: r('exec'), external: true }, { name: r('team') }, { name: r('dev') }],
    });

    beforeAll(async () => {
      // A non-superuser CREATEROLE executor creates the managed roles (and so holds ADMIN on them).
      await runSql(sandbox().url, `CREATE ROLE "${r('exec')}" CREATEROLE`);
      await runSql(
        sandbox().url,
        `SET ROLE "${r('exec')}"; CREATE ROLE "${r('team')}"; CREATE ROLE "${r('dev')}"; RESET ROLE;`,
      );
    });

    it('an undeclared edge the executor granted is revoked GRANTED BY it and is gone', async () => {
      await runSql(sandbox().url, `GRANT "${r('team')}" TO "${r('dev')}" GRANTED BY "${r('exec')}"`);
      expect((await applyOnce(sandbox().url, content(), r('exec'))).changes).toEqual([]);
      expect(await edgesOf(sandbox().url, r('team'))).toEqual([
        // The CREATEROLE self-grant stays: it is unmanaged.
        { member: r('exec'), grantor: 'postgres', inherit: false, admin: true },
      ]);
    });

    it('an edge the bootstrap superuser granted blocks the plan instead of a REVOKE that only warns', async () => {
      await runSql(sandbox().url, `GRANT "${r('team')}" TO "${r('dev')}"`);
      const result = await plan(sandbox().url, content(), r('exec'));
      expect(result.blockers).toEqual([
        `membership ${r('team')} -> ${r('dev')} was granted by the bootstrap superuser; on PostgreSQL 16+ ` +
          `only a role with the privileges of the bootstrap superuser can revoke it, and executor ${r('exec')} ` +
          'has not: revoke it as a superuser',
      ]);
      // As a superuser executor the same policy removes it.
      expect((await applyOnce(sandbox().url, content())).changes).toEqual([]);
      expect((await edgesOf(sandbox().url, r('team'))).map((e) => e.member)).not.toContain(r('dev'));
    });
  });
});

describe('MAINTAIN (PostgreSQL 17+) is outside the model: never granted, revoked or planned', () => {
  onServers([17, 18], (sandbox) => {
    const content = (): PolicyContent => ({
      roles: [{ name: r('reader') }],
      schemas: [{ name: r('s') }],
      grants: [
        { role: r('reader'), privileges: ['SELECT'], object: { type: 'table', schema: r('s'), name: 't' } },
        { role: r('reader'), privileges: ['SELECT'], object: { type: 'table', schema: r('s'), name: '*' } },
      ],
      default_privileges: [
        {
          owner: 'postgres',
          schema: r('s'),
          grant: [{ role: r('reader'), on_type: 'table', privileges: ['SELECT'] }],
        },
      ],
    });

    beforeAll(async () => {
      await runSql(
        sandbox().url,
        `CREATE SCHEMA "${r('s')}"; CREATE TABLE "${r('s')}".t (id int); CREATE TABLE "${r('s')}".u (id int);`,
      );
      expect((await applyOnce(sandbox().url, content())).changes).toEqual([]);
    });

    it('after GRANT ALL the undeclared privileges are revoked in one apply; MAINTAIN stays, the next plan is empty', async () => {
      await runSql(
        sandbox().url,
        `GRANT ALL ON TABLE "${r('s')}".t TO "${r('reader')}";
         ALTER DEFAULT PRIVILEGES IN SCHEMA "${r('s')}" GRANT ALL ON TABLES TO "${r('reader')}";`,
      );
      const drifted = await plan(sandbox().url, content());
      expect(drifted.changes.length).toBeGreaterThan(0);
      expect((await applyOnce(sandbox().url, content())).changes).toEqual([]);
      const privileges = [
        'SELECT',
        'INSERT',
        'UPDATE',
        'DELETE',
        'TRUNCATE',
        'REFERENCES',
        'TRIGGER',
        'MAINTAIN',
      ];
      const held = await rows<{ p: string }>(
        sandbox().url,
        `SELECT p FROM unnest($3::text[]) p WHERE has_table_privilege($1, $2, p)`,
        [r('reader'), `"${r('s')}".t`, privileges],
      );
      expect(held.map((row) => row.p)).toEqual(['SELECT', 'MAINTAIN']);
      const defaults = await rows<{ acl: string }>(
        sandbox().url,
        `SELECT defaclacl::text AS acl FROM pg_default_acl d JOIN pg_namespace n ON n.oid = d.defaclnamespace
          WHERE n.nspname = $1`,
        [r('s')],
      );
      expect(defaults).toEqual([{ acl: `{${r('reader')}=rm/postgres}` }]);
    });

    it('a MAINTAIN-only entry is read without error and plans nothing', async () => {
      await runSql(
        sandbox().url,
        `REVOKE ALL ON TABLE "${r('s')}".u FROM "${r('reader')}";
         GRANT SELECT, MAINTAIN ON TABLE "${r('s')}".u TO "${r('reader')}";
         CREATE ROLE "${r('other')}"; GRANT MAINTAIN ON TABLE "${r('s')}".t TO "${r('other')}";`,
      );
      const withOther: PolicyContent = { ...content(), roles: [{ name: r('reader') }, { name: r('other') }] };
      expect((await plan(sandbox().url, withOther)).changes).toEqual([]);
    });
  });
});

describe('predefined roles newer than the server are a plan-time blocker', () => {
  const content = (): PolicyContent => ({
    roles: [{ name: 'pg_maintain', external: true }, { name: r('ops') }],
    memberships: [{ role: 'pg_maintain', members: [{ name: r('ops') }] }],
  });

  onServers([14, 16], (sandbox) => {
    it('a membership in pg_maintain (PostgreSQL 17+) is refused and nothing is created', async () => {
      const major = Math.floor(sandbox().serverVersionNum / 10000);
      expect((await plan(sandbox().url, content())).blockers).toEqual([
        `predefined role pg_maintain does not exist on PostgreSQL ${major}: it was added in PostgreSQL 17`,
      ]);
      expect(await rows(sandbox().url, 'SELECT 1 FROM pg_roles WHERE rolname = $1', [r('ops')])).toEqual([]);
    });
  });

  onServers([17], (sandbox) => {
    it('on PostgreSQL 17 the same policy applies once and the member holds pg_maintain', async () => {
      expect((await applyOnce(sandbox().url, content())).changes).toEqual([]);
      expect(
        await rows(sandbox().url, `SELECT pg_has_role($1, 'pg_maintain', 'USAGE') AS usage`, [r('ops')]),
      ).toEqual([{ usage: true }]);
      await runSql(sandbox().url, `REVOKE pg_maintain FROM "${r('ops')}"`);
    });
  });
});
