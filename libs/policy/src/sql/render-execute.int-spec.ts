// The rendered SQL runs on the real server: a policy with hostile names goes through expandPolicy + computePlan +
// renderSql, every statement executes in one transaction, and the catalog then shows exactly the intended access.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { expandPolicy } from '../expansion/index.js';
import type { PolicyContent } from '../model/content.js';
import type { CatalogSnapshot } from '../model/snapshot.js';
import { computePlan } from '../plan/index.js';
import { scramSha256Verifier } from '../password/scram.js';
import { renderSql } from './render.js';

// Random, not the pid: roles are cluster-global and a killed run's leftovers must never collide.
const RUN = randomBytes(5).toString('hex');
const DB = `rp_sqlexec_${RUN}`;
const P = `rp${RUN}_`;
const OWNER = `${P}owner`;
const LEGACY = `${P}legacy`;
const VIEWER = `${P}viewer`;
const HOSTILE_ROLE = `${P}o'ne"il é\u{1F600}`;
const SCHEMA = `${P}sch"ema; --`;
const TABLE = 'it"ems';
const GRANTOR = `${P}gr"antor`;
const GRANTEE = `${P}gr'antee`;
const ROLES = [HOSTILE_ROLE, VIEWER, OWNER, LEGACY, GRANTOR, GRANTEE];
const ident = (s: string): string => `"${s.replaceAll('"', '""')}"`;
const connect = (database: string): pg.Client =>
  new pg.Client({ host: '127.0.0.1', port: 5432, user: 'postgres', database });

const POLICY: PolicyContent = {
  reconciliation_mode: 'authoritative',
  default_owner: OWNER,
  role_pattern: `${P}{profile}`,
  profiles: {
    viewer: {
      grants: [
        { object: { type: 'schema' }, privileges: ['USAGE'] },
        { object: { type: 'table', name: '*' }, privileges: ['SELECT'] },
        { object: { type: 'view', name: '*' }, privileges: ['SELECT'] },
        { object: { type: 'sequence', name: '*' }, privileges: ['USAGE'] },
        { object: { type: 'function', name: '*' }, privileges: ['EXECUTE'] },
      ],
      default_privileges: [{ on_type: 'table', privileges: ['SELECT'] }],
    },
  },
  schemas: [{ name: SCHEMA, profiles: ['viewer'] }],
  roles: [
    { name: OWNER, external: true },
    {
      name: HOSTILE_ROLE,
      login: true,
      comment: "it's \\ hostile",
      config: { search_path: `${ident(SCHEMA)}, public` },
      password: { secretRef: { name: 'creds' } },
    },
  ],
  grants: [
    {
      role: HOSTILE_ROLE,
      object: { type: 'table', schema: SCHEMA, name: TABLE },
      privileges: ['SELECT', 'UPDATE'],
    },
    {
      role: HOSTILE_ROLE,
      object: { type: 'function', schema: SCHEMA, name: 'restock(integer)' },
      privileges: ['EXECUTE'],
    },
    { role: 'PUBLIC', object: { type: 'schema', name: SCHEMA }, privileges: ['USAGE'], ensure: 'absent' },
  ],
  memberships: [{ role: VIEWER, members: [{ name: HOSTILE_ROLE, admin: true }] }],
  retirements: [{ role: LEGACY, reassign_owned_to: OWNER, drop_owned: true, terminate_sessions: true }],
};

function snapshot(serverVersionNum: number): CatalogSnapshot {
  const inv = (kind: CatalogSnapshot['inventory'][number]['kind'], name: string) => ({
    kind,
    schema: SCHEMA,
    name,
    owner: OWNER,
  });
  return {
    server_version_num: serverVersionNum,
    current_database: DB,
    executor: { role: 'postgres', superuser: true, createrole: true, member_of: [] },
    identity: { physical: null, physical_available: false, logical_fingerprint: null },
    roles: [
      {
        name: LEGACY,
        state: {
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
          config: {},
        },
      },
    ],
    schemas: [{ name: SCHEMA, owner: OWNER, owner_privileges: ['CREATE', 'USAGE'] }],
    grants: [{ grantee: 'PUBLIC', object_type: 'schema', schema: null, name: SCHEMA, privileges: ['USAGE'] }],
    default_privileges: [],
    memberships: [],
    inventory: [
      inv('table', TABLE),
      inv('view', 'v'),
      inv('materialized_view', 'mv'),
      inv('sequence', 's'),
      inv('function', 'restock(p_qty integer)'),
    ],
    unsatisfiable_wildcards: [],
    existing_roles: [OWNER, LEGACY],
    function_signatures: [
      { schema: SCHEMA, declared: 'restock(integer)', identity: 'restock(p_qty integer)' },
    ],
  };
}

describe('rendered SQL executes on PostgreSQL with the intended effect', () => {
  let client: pg.Client;
  const verifier = scramSha256Verifier('correct horse', Buffer.alloc(16, 4));

  beforeAll(async () => {
    const root = connect('postgres');
    await root.connect();
    await root.query(`DROP DATABASE IF EXISTS ${ident(DB)}`);
    await root.query(`CREATE DATABASE ${ident(DB)}`);
    for (const role of ROLES) await root.query(`DROP ROLE IF EXISTS ${ident(role)}`);
    await root.query(`CREATE ROLE ${ident(OWNER)} NOLOGIN`);
    await root.query(`CREATE ROLE ${ident(GRANTOR)} NOLOGIN`);
    await root.query(`CREATE ROLE ${ident(GRANTEE)} NOLOGIN`);
    await root.query(`CREATE ROLE ${ident(LEGACY)} LOGIN`);
    await root.end();
    client = connect(DB);
    await client.connect();
    const s = ident(SCHEMA);
    await client.query(`CREATE SCHEMA ${s} AUTHORIZATION ${ident(OWNER)}`);
    await client.query(`SET ROLE ${ident(OWNER)}`);
    await client.query(`CREATE TABLE ${s}.${ident(TABLE)} (id int)`);
    await client.query(`CREATE VIEW ${s}."v" AS SELECT 1 AS one`);
    await client.query(`CREATE MATERIALIZED VIEW ${s}."mv" AS SELECT 1 AS one`);
    await client.query(`CREATE SEQUENCE ${s}."s"`);
    await client.query(
      `CREATE FUNCTION ${s}."restock"(p_qty integer) RETURNS integer LANGUAGE sql AS 'SELECT 1'`,
    );
    await client.query('RESET ROLE');
    await client.query(`GRANT USAGE ON SCHEMA ${s} TO PUBLIC`);
    await client.query(`CREATE TABLE public."legacy_owned" (id int)`);
    await client.query(`ALTER TABLE public."legacy_owned" OWNER TO ${ident(LEGACY)}`);
  });

  afterAll(async () => {
    await client.end();
    const root = connect('postgres');
    await root.connect();
    await root.query(`DROP DATABASE IF EXISTS ${ident(DB)} WITH (FORCE)`);
    for (const role of ROLES) await root.query(`DROP ROLE IF EXISTS ${ident(role)}`);
    await root.end();
  });

  it('every statement runs and the catalog shows the declared access, the retirement and the password', async () => {
    const version = Number((await client.query<{ v: string }>('SHOW server_version_num')).rows[0]!.v);
    const expanded = expandPolicy(POLICY, { policyName: 'exec' });
    if (!expanded.ok) throw new Error(JSON.stringify(expanded.errors));
    const snap = snapshot(version);
    const plan = computePlan({
      desired: expanded.desired,
      snapshot: snap,
      mode: 'authoritative',
      passwordSources: { [HOSTILE_ROLE]: 'creds:password:1' },
      appliedPasswordSourceVersions: {},
      allowSchemaOwnerTransfers: false,
    });
    expect(plan.blockers).toEqual([]);
    const rendered = renderSql(plan.changes, {
      serverVersionNum: version,
      inventory: snap.inventory,
      passwords: { [HOSTILE_ROLE]: verifier },
    });

    await client.query('BEGIN');
    for (const statement of rendered.statements) {
      await client.query(statement.sql);
    }
    await client.query('COMMIT');

    const q = async (text: string, values: unknown[]): Promise<unknown> =>
      Object.values((await client.query(text, values)).rows[0] as Record<string, unknown>)[0];
    const rel = (name: string): string => `${ident(SCHEMA)}.${ident(name)}`;

    expect(await q(`SELECT has_table_privilege($1, $2, 'SELECT')`, [HOSTILE_ROLE, rel(TABLE)])).toBe(true);
    expect(await q(`SELECT has_table_privilege($1, $2, 'UPDATE')`, [HOSTILE_ROLE, rel(TABLE)])).toBe(true);
    expect(await q(`SELECT has_table_privilege($1, $2, 'SELECT')`, [VIEWER, rel('v')])).toBe(true);
    // Relation wildcards expand per relkind: the undeclared materialized view is untouched.
    expect(await q(`SELECT has_table_privilege($1, $2, 'SELECT')`, [VIEWER, rel('mv')])).toBe(false);
    expect(await q(`SELECT has_sequence_privilege($1, $2, 'USAGE')`, [VIEWER, rel('s')])).toBe(true);
    expect(
      await q(`SELECT has_function_privilege($1, $2, 'EXECUTE')`, [
        HOSTILE_ROLE,
        `${rel('restock')}(integer)`,
      ]),
    ).toBe(true);
    expect(await q(`SELECT has_schema_privilege($1, $2, 'USAGE')`, [VIEWER, SCHEMA])).toBe(true);
    expect(
      await q(
        `SELECT count(*)::int FROM pg_namespace n, aclexplode(n.nspacl) a WHERE n.nspname = $1 AND a.grantee = 0`,
        [SCHEMA],
      ),
    ).toBe(0);
    expect(
      await q(
        `SELECT admin_option FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.roleid JOIN pg_roles u ON u.oid = m.member
         WHERE r.rolname = $1 AND u.rolname = $2`,
        [VIEWER, HOSTILE_ROLE],
      ),
    ).toBe(true);
    expect(await q(`SELECT rolpassword FROM pg_authid WHERE rolname = $1`, [HOSTILE_ROLE])).toBe(verifier);
    expect(await q(`SELECT rolconfig FROM pg_roles WHERE rolname = $1`, [HOSTILE_ROLE])).toEqual([
      `search_path=${ident(SCHEMA)}, public`,
    ]);
    expect(
      await q(`SELECT shobj_description(oid, 'pg_authid') FROM pg_roles WHERE rolname = $1`, [HOSTILE_ROLE]),
    ).toBe("it's \\ hostile");
    expect(await q(`SELECT count(*)::int FROM pg_roles WHERE rolname = $1`, [LEGACY])).toBe(0);
    expect(
      await q(
        `SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = 'public.legacy_owned'::regclass`,
        [],
      ),
    ).toBe(OWNER);
    expect(
      await q(
        `SELECT count(*)::int FROM pg_default_acl d, aclexplode(d.defaclacl) a
         WHERE d.defaclnamespace = to_regnamespace($1)::oid AND a.grantee = to_regrole($2)::oid`,
        [ident(SCHEMA), ident(VIEWER)],
      ),
    ).toBe(1);
  });

  it('a revoke of a grant made by another grantor removes it (SET ROLE to the grantor, then back)', async () => {
    const table = `${ident(SCHEMA)}."granted_elsewhere"`;
    await client.query(`CREATE TABLE ${table} (id int)`);
    await client.query(`ALTER TABLE ${table} OWNER TO ${ident(OWNER)}`);
    // Revoking as the grantor resolves the name as the grantor: it needs USAGE on the schema.
    await client.query(`GRANT USAGE ON SCHEMA ${ident(SCHEMA)} TO ${ident(GRANTOR)}`);
    await client.query(`GRANT SELECT ON ${table} TO ${ident(GRANTOR)} WITH GRANT OPTION`);
    await client.query(`SET ROLE ${ident(GRANTOR)}`);
    await client.query(`GRANT SELECT ON ${table} TO ${ident(GRANTEE)}`);
    await client.query('RESET ROLE');
    const holds = async (): Promise<boolean> =>
      (
        await client.query<{ ok: boolean }>(`SELECT has_table_privilege($1, $2, 'SELECT') AS ok`, [
          GRANTEE,
          table,
        ])
      ).rows[0]!.ok;
    expect(await holds()).toBe(true);

    // A plain REVOKE by the superuser acts as the owner and leaves the other grantor's grant in place.
    await client.query(`REVOKE SELECT ON ${table} FROM ${ident(GRANTEE)}`);
    expect(await holds()).toBe(true);

    const rendered = renderSql(
      [
        {
          kind: 'revoke',
          role: GRANTEE,
          privileges: ['SELECT'],
          object_type: 'table',
          name: 'granted_elsewhere',
          schema: SCHEMA,
          grantor: GRANTOR,
        },
      ],
      { serverVersionNum: 150000, inventory: [], passwords: {}, executorRole: 'postgres' },
    );
    for (const statement of rendered.statements) await client.query(statement.sql);
    expect(await holds()).toBe(false);
    expect((await client.query<{ r: string }>('SELECT current_user AS r')).rows[0]!.r).toBe('postgres');
  });
});
