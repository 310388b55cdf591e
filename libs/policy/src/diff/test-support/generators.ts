// fast-check generators of desired states and live snapshots that stay inside the validation contract:
// a `*` and named selectors in one (grantee, type, schema) never disagree on a privilege; no grants to a
// schema's own owner; no owner=grantee defaults.

import fc from 'fast-check';
import type { DesiredRole, DesiredState, Retirement } from '../../model/desired.js';
import type { CatalogSnapshot, InventoryObject } from '../../model/snapshot.js';
import type {
  DefaultPrivilegeEntry,
  GrantEntry,
  MembershipEdge,
  RoleEntry,
  RoleState,
  SchemaEntry,
} from '../../model/state.js';
import type { ObjectType, Privilege, ReconciliationMode } from '../../model/vocabulary.js';
import { catalogSnapshot, desiredRole, desiredState, externalRole, roleState } from './builders.js';

/** Roles a generated policy may declare. */
export const DECLARABLE = ['r1', 'r2', 'r3', 'r4'] as const;
const EXTERNAL = 'ext';
const RETIRED = 'old';
const STRANGER = 'stranger';

interface Family {
  readonly type: ObjectType;
  readonly schema: string | null;
  /** Names as the policy writes them. */
  readonly declared: readonly string[];
  /** The same objects as the catalog keys them. */
  readonly live: readonly string[];
  readonly privileges: readonly Privilege[];
}

/** Grant target families: (type, schema) scopes with their objects and plausible privileges. */
export const FAMILIES: readonly Family[] = [
  {
    type: 'table',
    schema: 's1',
    declared: ['a', 'b'],
    live: ['a', 'b'],
    privileges: ['INSERT', 'SELECT', 'UPDATE'],
  },
  { type: 'table', schema: 's2', declared: [], live: [], privileges: ['SELECT'] },
  { type: 'sequence', schema: 's2', declared: ['q'], live: ['q'], privileges: ['SELECT', 'USAGE'] },
  {
    type: 'function',
    schema: 's1',
    declared: ['f(integer)'],
    live: ['f(p integer)'],
    privileges: ['EXECUTE'],
  },
  {
    type: 'schema',
    schema: null,
    declared: ['s1', 's2'],
    live: ['s1', 's2'],
    privileges: ['CREATE', 'USAGE'],
  },
  { type: 'database', schema: null, declared: ['app'], live: ['app'], privileges: ['CONNECT', 'TEMPORARY'] },
];

const ALL_INVENTORY: readonly InventoryObject[] = [
  { kind: 'table', schema: 's1', name: 'a', owner: 'postgres' },
  { kind: 'table', schema: 's1', name: 'b', owner: 'postgres' },
  { kind: 'function', schema: 's1', name: 'f(p integer)', owner: 'postgres' },
  { kind: 'sequence', schema: 's2', name: 'q', owner: 'postgres' },
];

const stateArb: fc.Arbitrary<RoleState> = fc
  .record({
    login: fc.boolean(),
    createdb: fc.boolean(),
    inherit: fc.boolean(),
    connection_limit: fc.constantFrom(-1, 3),
    comment: fc.constantFrom(null, 'c1', 'c2'),
    password_valid_until: fc.constantFrom(null, '2030-01-01T00:00:00Z'),
    work_mem: fc.constantFrom(null, '1MB', '2MB'),
    search_path: fc.constantFrom(null, 's1', 's1, s2'),
  })
  .map(({ work_mem, search_path, ...rest }) => {
    const config: Record<string, string> = {};
    if (work_mem !== null) config['work_mem'] = work_mem;
    if (search_path !== null) config['search_path'] = search_path;
    return roleState({ ...rest, config });
  });

/** 0 none, 1 present, 2 absent, per slot. */
const slots = fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 8, maxLength: 8 });

const desiredRawArb = fc.record({
  mode: fc.constantFrom<ReconciliationMode>('authoritative', 'additive', 'adopt'),
  declared: fc.subarray([...DECLARABLE], { minLength: 1 }),
  states: fc.array(stateArb, { minLength: 4, maxLength: 4 }),
  preserve: fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
  passwordRole: fc.option(fc.constantFrom(...DECLARABLE)),
  declareExternal: fc.boolean(),
  schemaOwners: fc.array(fc.option(fc.constantFrom(...DECLARABLE)), { minLength: 2, maxLength: 2 }),
  assertions: fc.array(
    fc.tuple(
      fc.nat(5),
      fc.nat(FAMILIES.length - 1),
      fc.constantFrom<'wildcard' | 'named' | 'both'>('wildcard', 'named', 'both'),
      slots,
    ),
    { maxLength: 10 },
  ),
  defaults: fc.array(
    fc.tuple(fc.nat(3), fc.boolean(), fc.constantFrom<ObjectType>('table', 'function'), fc.nat(5), slots),
    {
      maxLength: 5,
    },
  ),
  memberships: fc.array(fc.tuple(fc.nat(5), fc.nat(4), fc.boolean(), fc.boolean()), { maxLength: 6 }),
  exclusive: fc.subarray(['pg_monitor', EXTERNAL]),
  retire: fc.option(fc.record({ reassign: fc.boolean(), drop_owned: fc.boolean(), terminate: fc.boolean() })),
});

/** A random, valid desired state. */
export const desiredArb: fc.Arbitrary<DesiredState> = desiredRawArb.map((raw) => {
  const declared = DECLARABLE.filter((r) => raw.declared.includes(r));
  const roles: DesiredRole[] = declared.map((name) => {
    const i = DECLARABLE.indexOf(name);
    const password =
      raw.passwordRole === name ? ({ kind: 'secret_ref', secretName: 'pw', secretKey: name } as const) : null;
    return desiredRole(
      name,
      { ...raw.states[i]!, ...(password ? { login: true } : {}) },
      {
        preserve_undeclared_grants: raw.preserve[i]!,
        password,
      },
    );
  });
  if (raw.declareExternal) roles.push(externalRole(EXTERNAL));
  const schemaOwner = (schema: string): string | null => {
    const owner = raw.schemaOwners[schema === 's1' ? 0 : 1] ?? null;
    return owner !== null && declared.includes(owner) ? owner : null;
  };
  const schemas: SchemaEntry[] = ['s1', 's2'].map((name) => {
    const owner = schemaOwner(name);
    return { name, owner, owner_privileges: owner === null ? [] : ['CREATE', 'USAGE'] };
  });
  const grantees = [...declared, ...(raw.declareExternal ? [EXTERNAL] : []), 'PUBLIC'];
  const grants: GrantEntry[] = [];
  const absences: GrantEntry[] = [];
  const seen = new Set<string>();
  for (const [gi, fi, selector, states] of raw.assertions) {
    const grantee = grantees[gi % grantees.length]!;
    const family = FAMILIES[fi]!;
    const id = JSON.stringify([grantee, fi]);
    if (seen.has(id)) continue;
    seen.add(id);
    const wildcardable = family.type !== 'schema' && family.type !== 'database';
    // 'both': a `*` and named selectors in one scope, agreeing or silent on each privilege; a present/absent
    // disagreement is rejected by validation (grants run before revokes, so such a pair never converges).
    const names =
      !wildcardable || selector === 'named'
        ? family.declared
        : selector === 'wildcard'
          ? ['*']
          : ['*', ...family.declared];
    const stateOf = (ni: number, pi: number): number =>
      states[(ni * family.privileges.length + pi) % states.length]!;
    names.forEach((name, ni) => {
      if (family.type === 'schema' && schemaOwner(name) === grantee) return;
      const present: Privilege[] = [];
      const absent: Privilege[] = [];
      family.privileges.forEach((p, pi) => {
        const s = stateOf(ni, pi);
        if (
          selector === 'both' &&
          wildcardable &&
          name !== '*' &&
          s !== 0 &&
          stateOf(0, pi) !== 0 &&
          s !== stateOf(0, pi)
        ) {
          return;
        }
        if (s === 1) present.push(p);
        if (s === 2) absent.push(p);
      });
      const target = { grantee, object_type: family.type, schema: family.schema, name };
      if (present.length > 0) grants.push({ ...target, privileges: present });
      if (absent.length > 0) absences.push({ ...target, privileges: absent });
    });
  }
  const defaults: DefaultPrivilegeEntry[] = [];
  const defaultAbsences: DefaultPrivilegeEntry[] = [];
  const seenDefaults = new Set<string>();
  for (const [oi, global, onType, gi, states] of raw.defaults) {
    const owner = declared[oi % declared.length]!;
    const grantee = grantees[gi % grantees.length]!;
    if (grantee === owner) continue;
    const scope = global ? ({ type: 'global' } as const) : ({ type: 'schema', schema: 's1' } as const);
    const id = JSON.stringify([owner, global, onType, grantee]);
    if (seenDefaults.has(id)) continue;
    seenDefaults.add(id);
    const privileges: readonly Privilege[] = onType === 'table' ? ['INSERT', 'SELECT'] : ['EXECUTE'];
    const present = privileges.filter((_, i) => states[i] === 1);
    const absent = privileges.filter((_, i) => states[i] === 2);
    const key = { owner, scope, on_type: onType, grantee };
    if (present.length > 0) defaults.push({ ...key, privileges: present });
    if (absent.length > 0) defaultAbsences.push({ ...key, privileges: absent });
  }
  const grantable = [...declared, 'pg_monitor', ...(raw.declareExternal ? [EXTERNAL] : [])];
  const members = [...declared, ...(raw.declareExternal ? [EXTERNAL] : [])];
  const memberships: MembershipEdge[] = [];
  for (const [ri, mi, inherit, admin] of raw.memberships) {
    const role = grantable[ri % grantable.length]!;
    const member = members[mi % members.length]!;
    if (role === member || memberships.some((m) => m.role === role && m.member === member)) continue;
    memberships.push({ role, member, inherit, admin });
  }
  const retirements: Retirement[] =
    raw.retire === null
      ? []
      : [
          {
            role: RETIRED,
            reassign_owned_to: raw.retire.reassign ? declared[0]! : null,
            drop_owned: raw.retire.drop_owned,
            terminate_sessions: raw.retire.terminate,
          },
        ];
  return desiredState({
    reconciliation_mode: raw.mode,
    roles,
    schemas,
    grants,
    grant_absences: absences,
    default_privileges: defaults,
    default_privilege_absences: defaultAbsences,
    memberships,
    exclusive_membership_roles: raw.exclusive.filter((r) => r !== EXTERNAL || raw.declareExternal),
    retirements,
  });
});

const LIVE_ROLES = [...DECLARABLE, EXTERNAL, RETIRED, STRANGER] as const;

const snapshotRawArb = fc.record({
  roles: fc.subarray([...LIVE_ROLES]),
  states: fc.array(stateArb, { minLength: LIVE_ROLES.length, maxLength: LIVE_ROLES.length }),
  schemas: fc.array(
    fc.option(fc.tuple(fc.nat(LIVE_ROLES.length), fc.subarray<Privilege>(['CREATE', 'USAGE']))),
    { minLength: 2, maxLength: 2 },
  ),
  grants: fc.array(
    fc.tuple(
      fc.nat(LIVE_ROLES.length),
      fc.nat(FAMILIES.length - 1),
      fc.nat(1),
      fc.subarray<number>([0, 1, 2], { minLength: 1 }),
    ),
    { maxLength: 12 },
  ),
  defaults: fc.array(
    fc.tuple(
      fc.nat(LIVE_ROLES.length - 1),
      fc.boolean(),
      fc.constantFrom<ObjectType>('table', 'function'),
      fc.nat(LIVE_ROLES.length),
    ),
    { maxLength: 5 },
  ),
  memberships: fc.array(
    fc.tuple(
      fc.nat(LIVE_ROLES.length),
      fc.nat(LIVE_ROLES.length - 1),
      fc.boolean(),
      fc.boolean(),
      fc.constantFrom<string | null>(null, 'g1', 'g2'),
    ),
    {
      maxLength: 8,
    },
  ),
  pg16: fc.boolean(),
  superuser: fc.boolean(),
});

/** A random live snapshot over the same names (roles that do not exist hold nothing). */
export const snapshotArb: fc.Arbitrary<CatalogSnapshot> = snapshotRawArb.map((raw) => {
  const present = LIVE_ROLES.filter((r) => raw.roles.includes(r));
  const roles: RoleEntry[] = present.map((name) => ({ name, state: raw.states[LIVE_ROLES.indexOf(name)]! }));
  const owners = [...present.filter((r) => r !== RETIRED), 'postgres'];
  const schemas: SchemaEntry[] = [];
  ['s1', 's2'].forEach((name, i) => {
    const s = raw.schemas[i];
    if (s === null || s === undefined) return;
    schemas.push({ name, owner: owners[s[0] % owners.length]!, owner_privileges: s[1] });
  });
  const schemaExists = (name: string | null): boolean =>
    name === null || schemas.some((s) => s.name === name);
  const grantees = [...present, 'PUBLIC'];
  const grants: GrantEntry[] = [];
  for (const [gi, fi, oi, pis] of raw.grants) {
    const family = FAMILIES[fi]!;
    if (family.live.length === 0 || !schemaExists(family.schema)) continue;
    const grantee = grantees[gi % grantees.length]!;
    const name = family.live[oi % family.live.length]!;
    if (
      family.type === 'schema' &&
      (!schemaExists(name) || schemas.find((s) => s.name === name)?.owner === grantee)
    )
      continue;
    const privileges = pis.map((i) => family.privileges[i % family.privileges.length]!);
    grants.push({ grantee, object_type: family.type, schema: family.schema, name, privileges });
  }
  const defaults: DefaultPrivilegeEntry[] = [];
  for (const [oi, global, onType, gi] of raw.defaults) {
    if (present.length === 0) break;
    const owner = present[oi % present.length]!;
    const grantee = grantees[gi % grantees.length]!;
    if (owner === grantee) continue;
    const scope = global ? ({ type: 'global' } as const) : ({ type: 'schema', schema: 's1' } as const);
    defaults.push({
      owner,
      scope,
      on_type: onType,
      grantee,
      privileges: onType === 'table' ? ['SELECT'] : ['EXECUTE'],
    });
  }
  const grantedPool = [...present, 'pg_monitor'];
  const memberPool = [...present, 'pg_read_all_stats'];
  const memberships: MembershipEdge[] = [
    { role: 'pg_read_all_stats', member: 'pg_monitor', inherit: true, admin: false },
  ];
  for (const [ri, mi, inherit, admin, grantor] of raw.memberships) {
    const role = grantedPool[ri % grantedPool.length]!;
    const member = memberPool[mi % memberPool.length]!;
    const pg16Grantor = raw.pg16 ? grantor : null;
    const duplicate = memberships.some(
      (m) => m.role === role && m.member === member && (m.grantor ?? null) === pg16Grantor,
    );
    if (role === member || duplicate) continue;
    // PG16+ keeps one row per grantor; PG15 has one row per edge.
    if (!raw.pg16 && memberships.some((m) => m.role === role && m.member === member)) continue;
    memberships.push({ role, member, inherit, admin, grantor: pg16Grantor });
  }
  return catalogSnapshot({
    server_version_num: raw.pg16 ? 160004 : 150010,
    executor: { role: 'rolepolicy_executor', superuser: raw.superuser, createrole: true, member_of: [] },
    roles,
    existing_roles: [...present, 'pg_monitor', 'pg_read_all_stats'],
    schemas,
    grants,
    default_privileges: defaults,
    memberships,
    inventory: ALL_INVENTORY.filter((o) => schemaExists(o.schema)),
    function_signatures: [{ schema: 's1', declared: 'f(integer)', identity: 'f(p integer)' }],
  });
});
