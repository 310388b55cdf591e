// Seeded random worlds for the live convergence property test: per-seed objects (raw SQL), a random
// policy over them, and random raw-SQL drift. Every role name carries the seed and a per-run tag: roles
// are cluster-global, so two runs of the same seed (CI beside a developer, or a killed run's leftovers)
// must never share a role.

import type { PolicyContent, ProfileSpec } from '@rolepolicy/policy';

/** A small deterministic PRNG (mulberry32): the same seed always builds the same world. */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Random helpers over one PRNG. */
export class Dice {
  constructor(private readonly next: () => number) {}
  chance(p: number): boolean {
    return this.next() < p;
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
  subset<T>(items: readonly T[], min = 1): T[] {
    const chosen = items.filter(() => this.chance(0.5));
    while (chosen.length < min) {
      const item = this.pick(items);
      if (!chosen.includes(item)) chosen.push(item);
    }
    return items.filter((item) => chosen.includes(item));
  }
}

const q = (identifier: string): string => `"${identifier.replaceAll('"', '""')}"`;

/** An object the world creates, with how a policy names it and how SQL names it. */
export interface WorldObject {
  readonly type: 'table' | 'view' | 'materialized_view' | 'sequence' | 'function' | 'type';
  readonly schema: string;
  /** The policy's name (functions by input types, e.g. `f0(integer)`). */
  readonly name: string;
  /** SQL target for GRANT/REVOKE in drift (`TABLE "s"."t"`, `FUNCTION "s"."f0"(integer)`). */
  readonly sqlTarget: string;
  readonly privileges: readonly string[];
}

/** One seed's world: setup SQL (as superuser), the policy, and the executor to plan as. */
export interface World {
  readonly prefix: string;
  readonly roles: readonly string[];
  readonly owner: string;
  /** Non-null when the plan runs as a non-superuser CREATEROLE executor (SET ROLE). */
  readonly executor: string | null;
  readonly schemas: readonly string[];
  /** Roles generated from the 'ro' profile, one per bound schema (empty when no profile is bound). */
  readonly generated: readonly { readonly role: string; readonly schema: string }[];
  readonly objects: readonly WorldObject[];
  readonly setupSql: string;
  readonly content: PolicyContent;
  readonly database: string;
  readonly serverVersionNum: number;
}

const RELATION = ['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'REFERENCES', 'TRIGGER'];

function objectsOf(schema: string, full: boolean): { objects: WorldObject[]; sql: string[] } {
  const s = q(schema);
  const objects: WorldObject[] = [
    { type: 'table', schema, name: 't0', sqlTarget: `TABLE ${s}."t0"`, privileges: RELATION },
    { type: 'view', schema, name: 'v0', sqlTarget: `TABLE ${s}."v0"`, privileges: RELATION },
    {
      type: 'sequence',
      schema,
      name: 'q0',
      sqlTarget: `SEQUENCE ${s}."q0"`,
      privileges: ['SELECT', 'UPDATE', 'USAGE'],
    },
    {
      type: 'function',
      schema,
      name: 'f0(integer)',
      sqlTarget: `FUNCTION ${s}."f0"(integer)`,
      privileges: ['EXECUTE'],
    },
    { type: 'type', schema, name: 'e0', sqlTarget: `TYPE ${s}."e0"`, privileges: ['USAGE'] },
  ];
  const sql = [
    `CREATE TABLE ${s}."t0" (id int)`,
    `CREATE VIEW ${s}."v0" AS SELECT 1 AS x`,
    `CREATE SEQUENCE ${s}."q0"`,
    `CREATE FUNCTION ${s}."f0"(p_id integer, OUT x text) LANGUAGE sql AS 'SELECT ''a'''`,
    `CREATE TYPE ${s}."e0" AS ENUM ('a')`,
  ];
  if (full) {
    objects.push(
      { type: 'table', schema, name: 'pt', sqlTarget: `TABLE ${s}."pt"`, privileges: RELATION },
      { type: 'materialized_view', schema, name: 'm0', sqlTarget: `TABLE ${s}."m0"`, privileges: RELATION },
      {
        type: 'function',
        schema,
        name: 'f1(integer, integer[])',
        sqlTarget: `FUNCTION ${s}."f1"(integer, integer[])`,
        privileges: ['EXECUTE'],
      },
      {
        type: 'function',
        schema,
        name: 'pr0(integer)',
        sqlTarget: `PROCEDURE ${s}."pr0"(integer)`,
        privileges: ['EXECUTE'],
      },
      { type: 'type', schema, name: 'd0', sqlTarget: `TYPE ${s}."d0"`, privileges: ['USAGE'] },
    );
    sql.push(
      `CREATE TABLE ${s}."pt" (id int) PARTITION BY RANGE (id)`,
      `CREATE MATERIALIZED VIEW ${s}."m0" AS SELECT 1 AS x`,
      `CREATE FUNCTION ${s}."f1"(a integer, VARIADIC rest integer[]) RETURNS int LANGUAGE sql AS 'SELECT a'`,
      `CREATE PROCEDURE ${s}."pr0"(IN a integer) LANGUAGE sql AS 'SELECT 1'`,
      `CREATE DOMAIN ${s}."d0" AS int`,
    );
  }
  return { objects, sql };
}

/**
 * Builds the world of one seed. `runTag` ([a-z0-9]) makes role names unique to this run; the world's
 * shape depends on the seed only. `serverVersionNum` only changes what setup grants a CREATEROLE executor
 * (PostgreSQL 16+ asks for more, see below).
 */
export function buildWorld(seed: number, database: string, runTag: string, serverVersionNum = 150000): World {
  const dice = new Dice(prng(seed));
  const prefix = `cv${seed}_${runTag}_`;
  const useExecutor = dice.chance(0.3);
  const owner = useExecutor ? `${prefix}exec` : `${prefix}owner`;
  const roles = [0, 1, 2, 3].map((i) => `${prefix}r${i}`);
  const retired = `${prefix}old`;
  const schemas = [`${prefix}s0`, `${prefix}s1`];

  // PostgreSQL 16+: a CREATEROLE executor may give CREATEDB only if it has it, may drop (retire) only roles
  // it holds ADMIN on, and may grant a pg_* role only WITH ADMIN OPTION on it. Roles it creates itself come
  // with ADMIN. An operator sets an executor up like this (docs/postgres-versions.md).
  const pg16 = serverVersionNum >= 160000;
  const setup: string[] = [
    useExecutor ? `CREATE ROLE ${q(owner)} CREATEROLE${pg16 ? ' CREATEDB' : ''}` : `CREATE ROLE ${q(owner)}`,
    `CREATE ROLE ${q(retired)}`,
    ...(useExecutor && pg16
      ? [
          `GRANT ${q(retired)} TO ${q(owner)} WITH ADMIN OPTION`,
          `GRANT pg_read_all_stats TO ${q(owner)} WITH ADMIN OPTION`,
        ]
      : []),
  ];
  const objects: WorldObject[] = [];
  for (const [index, schema] of schemas.entries()) {
    setup.push(`CREATE SCHEMA ${q(schema)} AUTHORIZATION ${q(owner)}`);
    // Objects are created by their owner so that a CREATEROLE executor can grant on them.
    setup.push(`SET ROLE ${q(owner)}`);
    const made = objectsOf(schema, index === 0);
    objects.push(...made.objects);
    setup.push(...made.sql, 'RESET ROLE');
  }
  // A retired role with an owned object and a grant (superuser executors reassign to the owner and drop it).
  if (!useExecutor) {
    setup.push(
      `GRANT CREATE, USAGE ON SCHEMA ${q(schemas[0]!)} TO ${q(retired)}`,
      `SET ROLE ${q(retired)}`,
      `CREATE TABLE ${q(schemas[0]!)}."old_t" (id int)`,
      'RESET ROLE',
      `GRANT SELECT ON ${q(schemas[0]!)}."t0" TO ${q(retired)}`,
    );
  }

  // Roles: random attributes within what the executor may set.
  const inheritOf = new Map<string, boolean>();
  const roleSpecs = roles.map((name) => {
    const inherit = dice.chance(0.8);
    inheritOf.set(name, inherit);
    return {
      name,
      ...(dice.chance(0.5) ? { login: true } : {}),
      ...(dice.chance(0.3) ? { createdb: true } : {}),
      ...(!inherit ? { inherit: false } : {}),
      ...(dice.chance(0.3) ? { connection_limit: dice.pick([0, 5, 10]) } : {}),
      ...(dice.chance(0.4) ? { comment: dice.pick(["it's a role", 'reader', 'ünïcode ✓']) } : {}),
      ...(dice.chance(0.4)
        ? {
            config: {
              ...(dice.chance(0.7)
                ? { search_path: dice.pick([`${schemas[0]}, public`, 'a, "My Schema"', '"$user", public']) }
                : {}),
              ...(dice.chance(0.5) ? { statement_timeout: dice.pick(['30s', '5min']) } : {}),
            },
          }
        : {}),
      ...(dice.chance(0.3)
        ? { password_valid_until: dice.pick(['2031-01-01T00:00:00Z', '2032-06-01T12:00:00+02:00']) }
        : {}),
      ...(!useExecutor && dice.chance(0.15) ? { replication: true } : {}),
    };
  });
  const ownerSpec = useExecutor ? { name: owner, external: true } : { name: owner };

  // Grants: per object, wildcards over mixed relkinds, schema and database grants, PUBLIC rules.
  const grants: NonNullable<PolicyContent['grants']>[number][] = [];
  const taken = new Set<string>();
  for (let i = dice.int(0, 3); i > 0; i--) {
    const type = dice.pick(['table', 'view', 'materialized_view', 'sequence', 'function'] as const);
    const schema = dice.pick(schemas);
    const role = dice.pick(roles);
    const key = `${role}|${type}|${schema}|*`;
    if (taken.has(key)) continue;
    taken.add(key);
    const privileges =
      type === 'function'
        ? ['EXECUTE']
        : type === 'sequence'
          ? dice.subset(['SELECT', 'USAGE'])
          : dice.subset(['SELECT', 'INSERT']);
    grants.push({ role, privileges: privileges as never, object: { type, schema, name: '*' } });
  }
  for (let i = dice.int(2, 7); i > 0; i--) {
    const object = dice.pick(objects);
    const role = dice.pick(roles);
    const key = `${role}|${object.type}|${object.schema}|${object.name}`;
    if (taken.has(key)) continue;
    taken.add(key);
    grants.push({
      role,
      privileges: dice.subset(object.privileges) as never,
      object: { type: object.type, schema: object.schema, name: object.name },
    });
  }
  for (const role of dice.subset(roles, 1)) {
    grants.push({
      role,
      privileges: dice.subset(['USAGE', 'CREATE']) as never,
      object: { type: 'schema', name: dice.pick(schemas) },
    });
  }
  if (!useExecutor && dice.chance(0.4)) {
    grants.push({
      role: dice.pick(roles),
      privileges: dice.subset(['CONNECT', 'TEMPORARY']) as never,
      object: { type: 'database', name: database },
    });
  }
  if (dice.chance(0.6)) {
    grants.push({
      role: 'PUBLIC',
      ensure: 'absent',
      privileges: ['EXECUTE'],
      object: {
        type: 'function',
        schema: schemas[0]!,
        name: dice.pick(['f0(integer)', 'f1(integer, integer[])']),
      },
    });
  }
  if (dice.chance(0.4)) {
    grants.push({
      role: 'PUBLIC',
      ensure: 'absent',
      privileges: ['USAGE'],
      object: { type: 'type', schema: schemas[1]!, name: 'e0' },
    });
  }

  // Default privileges: schema layer and a declared global pair, plus a PUBLIC absence on functions.
  const defaults: NonNullable<PolicyContent['default_privileges']>[number][] = [];
  if (dice.chance(0.7)) {
    const items = dice
      .subset([
        { on_type: 'table' as const, privileges: ['SELECT'] },
        { on_type: 'sequence' as const, privileges: ['USAGE'] },
        { on_type: 'function' as const, privileges: ['EXECUTE'] },
        { on_type: 'type' as const, privileges: ['USAGE'] },
      ])
      .map((item) => ({ ...item, role: dice.pick(roles), privileges: item.privileges as never }));
    defaults.push({ owner, schema: dice.pick(schemas), grant: items });
  }
  if (dice.chance(0.5)) {
    defaults.push({
      owner,
      scope: { type: 'global' },
      grant: [
        { role: dice.pick(roles), on_type: 'function', privileges: ['EXECUTE'] },
        ...(dice.chance(0.5)
          ? [
              {
                role: 'PUBLIC',
                ensure: 'absent' as const,
                on_type: 'function' as const,
                privileges: ['EXECUTE' as const],
              },
            ]
          : []),
      ],
    });
  }

  // Memberships: acyclic (a role only joins lower-numbered roles); PG15 edge inherit = member's rolinherit.
  const memberships: NonNullable<PolicyContent['memberships']>[number][] = [];
  for (let j = 0; j < roles.length; j++) {
    const members = roles
      .slice(j + 1)
      .filter(() => dice.chance(0.35))
      .map((member) => ({
        name: member,
        ...(inheritOf.get(member) ? {} : { inherit: false }),
        ...(dice.chance(0.3) ? { admin: true } : {}),
      }));
    if (members.length > 0) memberships.push({ role: roles[j]!, members });
  }
  if (dice.chance(0.3)) {
    const member = dice.pick(roles);
    memberships.push({
      role: 'pg_read_all_stats',
      members: [{ name: member, ...(inheritOf.get(member) ? {} : { inherit: false }) }],
    });
  }

  // Profiles bound to schemas (drawn last, so that earlier seeds keep their shape): a generated role per
  // bound schema named by role_pattern, templated wildcard grants, default privileges of default_owner.
  const profiles: Record<string, ProfileSpec> = {};
  let bound: readonly string[] = [];
  if (dice.chance(0.5)) {
    const templates: NonNullable<ProfileSpec['grants']>[number][] = [
      { object: { type: 'table', name: '*' }, privileges: ['SELECT'] },
      { object: { type: 'view', name: '*' }, privileges: ['SELECT'] },
      { object: { type: 'sequence', name: '*' }, privileges: ['USAGE'] },
      { object: { type: 'function', name: '*' }, privileges: ['EXECUTE'] },
      { object: { type: 'type', name: '*' }, privileges: ['USAGE'] },
    ];
    profiles['ro'] = {
      ...(dice.chance(0.3) ? { login: true } : {}),
      ...(dice.chance(0.3) ? { config: { search_path: '{schema}, public' } } : {}),
      grants: [{ object: { type: 'schema' }, privileges: ['USAGE'] }, ...dice.subset(templates)],
      ...(dice.chance(0.6) ? { default_privileges: [{ on_type: 'table', privileges: ['SELECT'] }] } : {}),
    };
    bound = dice.subset(schemas);
    for (const schema of bound) {
      if (!dice.chance(0.5)) continue;
      const member = dice.pick(roles);
      memberships.push({
        role: `${prefix}ro_${schema}`,
        members: [{ name: member, ...(inheritOf.get(member) ? {} : { inherit: false }) }],
      });
    }
  }

  // A per-object grant to the objects' owner (drawn last): held implicitly, never re-issued.
  if (dice.chance(0.3)) {
    const object = dice.pick(objects);
    grants.push({
      role: owner,
      privileges: dice.subset(object.privileges) as never,
      object: { type: object.type, schema: object.schema, name: object.name },
    });
  }

  const content: PolicyContent = {
    reconciliation_mode: 'authoritative',
    ...(bound.length > 0
      ? { default_owner: owner, role_pattern: `${prefix}{profile}_{schema}`, profiles }
      : {}),
    roles: [
      ...roleSpecs,
      ownerSpec,
      ...(memberships.some((m) => m.role === 'pg_read_all_stats')
        ? [{ name: 'pg_read_all_stats', external: true }]
        : []),
    ],
    schemas: schemas.map((name) => (bound.includes(name) ? { name, profiles: ['ro'] } : { name })),
    grants,
    default_privileges: defaults,
    memberships,
    retirements: [
      useExecutor ? { role: retired } : { role: retired, reassign_owned_to: owner, drop_owned: true },
    ],
  };
  return {
    prefix,
    roles,
    owner,
    executor: useExecutor ? owner : null,
    schemas,
    generated: bound.map((schema) => ({ role: `${prefix}ro_${schema}`, schema })),
    objects,
    setupSql: setup.join(';\n'),
    content,
    database,
    serverVersionNum,
  };
}

/** Random raw-SQL drift over the world's managed state (run as superuser). */
export function driftSql(world: World, seed: number): string[] {
  const dice = new Dice(prng(seed ^ 0x5bd1e995));
  const statements: string[] = [];
  const { objects, schemas, owner } = world;
  // A role dropped by an earlier drift statement is not used again.
  const roles = [...world.roles];
  for (let i = dice.int(2, 6); i > 0 && roles.length > 1; i--) {
    const name = dice.pick(roles);
    const role = q(name);
    const object = dice.pick(objects);
    switch (dice.int(0, 10)) {
      case 0:
        statements.push(`REVOKE ALL ON ${object.sqlTarget} FROM ${role}`);
        break;
      case 1:
        statements.push(
          `GRANT ${dice.subset(object.privileges).join(', ')} ON ${object.sqlTarget} TO ${role}`,
        );
        break;
      case 2:
        statements.push(
          `ALTER ROLE ${role} ${dice.pick(['LOGIN', 'NOLOGIN', 'CONNECTION LIMIT 7', 'CREATEDB', "VALID UNTIL '2040-01-01'", 'NOINHERIT'])}`,
        );
        break;
      case 3:
        statements.push(
          dice.chance(0.5) ? `ALTER ROLE ${role} SET work_mem = '4MB'` : `ALTER ROLE ${role} RESET ALL`,
        );
        break;
      case 4:
        statements.push(`COMMENT ON ROLE ${role} IS 'drifted'`);
        break;
      case 5: {
        // Only lower-numbered roles are granted to higher-numbered ones, so drift never makes a cycle.
        const [a, b] = [dice.pick(roles), dice.pick(roles)].sort();
        // PG16+ keeps the grantor of an edge, and a CREATEROLE executor cannot revoke one the bootstrap
        // superuser granted (the plan is refused instead: docs/postgres-versions.md), so drift in such
        // worlds is granted in the executor's name.
        const by =
          world.executor !== null && world.serverVersionNum >= 160000
            ? ` GRANTED BY ${q(world.executor)}`
            : '';
        if (a !== b)
          statements.push(
            dice.chance(0.5) ? `GRANT ${q(a!)} TO ${q(b!)}${by}` : `REVOKE ${q(a!)} FROM ${q(b!)}${by}`,
          );
        break;
      }
      case 6:
        statements.push(
          `ALTER DEFAULT PRIVILEGES FOR ROLE ${q(owner)} IN SCHEMA ${q(dice.pick(schemas))} GRANT INSERT ON TABLES TO ${role}`,
        );
        break;
      case 7:
        statements.push(
          `GRANT EXECUTE ON FUNCTION ${q(schemas[0]!)}."f0"(integer) TO PUBLIC`,
          `GRANT USAGE ON TYPE ${q(schemas[1]!)}."e0" TO PUBLIC`,
        );
        break;
      case 8: {
        // New objects in a wildcard scope: the wildcard is unsatisfied until granted. The name is unique
        // per drift step (the same name twice made CREATE FUNCTION fail with the admin left in SET ROLE).
        const schema = q(dice.pick(schemas));
        const name = `n${dice.int(0, 999)}_${i}`;
        statements.push(
          `SET ROLE ${q(owner)}`,
          `CREATE TABLE IF NOT EXISTS ${schema}."${name}_t" (id int)`,
          `CREATE OR REPLACE VIEW ${schema}."${name}_v" AS SELECT 1 AS x`,
          `CREATE OR REPLACE FUNCTION ${schema}."${name}_f"(INOUT a integer) LANGUAGE sql AS 'SELECT a'`,
          'RESET ROLE',
        );
        break;
      }
      case 9:
        // A managed role dropped behind the policy's back.
        statements.push(`DROP OWNED BY ${role}`, `DROP ROLE ${role}`);
        roles.splice(roles.indexOf(name), 1);
        break;
      default:
        statements.push(`GRANT CREATE ON SCHEMA ${q(dice.pick(schemas))} TO ${role}`);
        break;
    }
  }
  // Drift on generated profile roles, from its own stream so that the steps above keep their shape.
  // Never memberships: generated roles sort after the numbered ones, so an edge could close a cycle.
  const more = new Dice(prng(seed ^ 0x27d4eb2f));
  for (const { role: name, schema } of world.generated) {
    const role = q(name);
    switch (more.int(0, 5)) {
      case 0:
        statements.push(`REVOKE ALL ON SCHEMA ${q(schema)} FROM ${role}`);
        break;
      case 1:
        statements.push(`REVOKE ALL ON ALL TABLES IN SCHEMA ${q(schema)} FROM ${role}`);
        break;
      case 2:
        statements.push(`GRANT DELETE ON ALL TABLES IN SCHEMA ${q(schema)} TO ${role}`);
        break;
      case 3:
        statements.push(`ALTER ROLE ${role} ${more.pick(['LOGIN', 'NOINHERIT', 'CONNECTION LIMIT 3'])}`);
        break;
      case 4:
        statements.push(`DROP OWNED BY ${role}`, `DROP ROLE ${role}`);
        break;
      default:
        break;
    }
  }
  return statements;
}

/** SQL that removes everything of a world (objects, default privileges, roles). */
export function teardownSql(world: World): string[] {
  return [`DROP SCHEMA IF EXISTS ${world.schemas.map(q).join(', ')} CASCADE`];
}
