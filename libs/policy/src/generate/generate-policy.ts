// Pure generation: the live access of the selected roles (a GenerateSource) -> PostgresPolicy content that
// plans to zero changes in authoritative mode, with per-entry notes (comments) and warnings for everything a
// human must decide or the spec cannot state. Stable order: every list sorted by code point.

import { compareCodePoints } from '../canonical-order.js';
import type {
  DefaultPrivilegeGrantSpec,
  DefaultPrivilegeSpec,
  GrantSpec,
  MemberSpec,
  MembershipSpec,
  PolicyContent,
  RoleSpec,
  SchemaBindingSpec,
} from '../model/content.js';
import type { RoleEntry } from '../model/state.js';
import { compareObjectTypes, type ReconciliationMode } from '../model/vocabulary.js';
import { DEFAULT_ROLE_STATE } from '../expansion/role-state.js';
import { compareGrantees } from '../canonical-order.js';
import { collapseGrants } from './collapse.js';
import { publicDefaultItems, publicGrants } from './public-grants.js';
import type { GenerateSource, InexpressibleAccess } from './source.js';

/** Comments attached to the generated YAML: per role, per schema, and at the top of the spec. */
export interface GenerateNotes {
  readonly header: readonly string[];
  readonly roles: ReadonlyMap<string, readonly string[]>;
  readonly schemas: ReadonlyMap<string, readonly string[]>;
}

/** The generated content with its notes and warnings (each warning is one line for stderr). */
export interface GeneratedPolicy {
  readonly content: PolicyContent;
  readonly notes: GenerateNotes;
  readonly warnings: readonly string[];
}

/** Generation options. */
export interface GenerateOptions {
  readonly mode: Extract<ReconciliationMode, 'authoritative' | 'additive'>;
}

/** Words for each kind of inexpressible access (warning text). */
const INEXPRESSIBLE_WORDS: Readonly<Record<string, string>> = {
  column_privilege: 'column privilege',
  grant_option: 'WITH GRANT OPTION',
  maintain: 'MAINTAIN privilege',
  language: 'privilege on a language',
  foreign_data_wrapper: 'privilege on a foreign data wrapper',
  foreign_server: 'privilege on a foreign server',
  large_object: 'privilege on a large object',
  tablespace: 'privilege on a tablespace',
  membership_outside_selection: 'membership in a role outside --roles',
};

/** The role entry: only attributes that differ from PostgreSQL's defaults (omitted ones are enforced). */
function roleSpec(role: RoleEntry): RoleSpec {
  const s = role.state;
  const d = DEFAULT_ROLE_STATE;
  const config = Object.keys(s.config).sort(compareCodePoints);
  return {
    name: role.name,
    ...(s.login !== d.login ? { login: s.login } : {}),
    ...(s.superuser !== d.superuser ? { superuser: s.superuser } : {}),
    ...(s.createdb !== d.createdb ? { createdb: s.createdb } : {}),
    ...(s.createrole !== d.createrole ? { createrole: s.createrole } : {}),
    ...(s.inherit !== d.inherit ? { inherit: s.inherit } : {}),
    ...(s.replication !== d.replication ? { replication: s.replication } : {}),
    ...(s.bypassrls !== d.bypassrls ? { bypassrls: s.bypassrls } : {}),
    ...(s.connection_limit !== d.connection_limit ? { connection_limit: s.connection_limit } : {}),
    ...(s.comment !== null ? { comment: s.comment } : {}),
    ...(config.length > 0 ? { config: Object.fromEntries(config.map((key) => [key, s.config[key]!])) } : {}),
    ...(s.password_valid_until !== null ? { password_valid_until: s.password_valid_until } : {}),
  };
}

/** Memberships: every member of a selected role, and selected members of predefined roles; one row per edge. */
function memberships(source: GenerateSource): MembershipSpec[] {
  const selected = new Set(source.selected_roles);
  const byRole = new Map<string, Map<string, MemberSpec>>();
  for (const edge of source.snapshot.memberships) {
    const predefined = edge.role.startsWith('pg_');
    if (!(selected.has(edge.role) || (predefined && selected.has(edge.member)))) continue;
    const members = byRole.get(edge.role) ?? new Map<string, MemberSpec>();
    byRole.set(edge.role, members);
    // PostgreSQL 16+ keeps one row per grantor; the diff compares the first (bootstrap grantor first).
    if (members.has(edge.member)) continue;
    members.set(edge.member, {
      name: edge.member,
      ...(edge.inherit ? {} : { inherit: false }),
      ...(edge.admin ? { admin: true } : {}),
    });
  }
  return [...byRole.entries()]
    .sort(([a], [b]) => compareCodePoints(a, b))
    .map(([role, members]) => ({
      role,
      members: [...members.values()].sort((a, b) => compareCodePoints(a.name, b.name)),
    }));
}

/** Default privileges grouped per (owner, scope), at most 64 grant items per entry (the spec's bound). */
function defaultPrivileges(source: GenerateSource): DefaultPrivilegeSpec[] {
  const selected = new Set(source.selected_roles);
  const groups = new Map<
    string,
    { owner: string; schema: string | null; grant: DefaultPrivilegeGrantSpec[] }
  >();
  for (const [id, items] of publicDefaultItems(source)) {
    const [owner, schema] = JSON.parse(id) as [string, string | null];
    groups.set(id, { owner, schema, grant: [...items] });
  }
  for (const entry of source.snapshot.default_privileges) {
    if (!selected.has(entry.grantee)) continue;
    const schema = entry.scope.type === 'schema' ? entry.scope.schema : null;
    const id = JSON.stringify([entry.owner, schema]);
    const group = groups.get(id) ?? { owner: entry.owner, schema, grant: [] };
    groups.set(id, group);
    group.grant.push({ on_type: entry.on_type, privileges: [...entry.privileges], role: entry.grantee });
  }
  const scopeOrder = (a: string | null, b: string | null): number =>
    a === b ? 0 : a === null ? -1 : b === null ? 1 : compareCodePoints(a, b);
  return [...groups.values()]
    .sort((a, b) => compareCodePoints(a.owner, b.owner) || scopeOrder(a.schema, b.schema))
    .flatMap((group) => {
      const items = group.grant.sort(
        (a, b) =>
          compareObjectTypes(a.on_type, b.on_type) ||
          compareGrantees(a.role ?? '', b.role ?? '') ||
          compareCodePoints(a.ensure ?? 'present', b.ensure ?? 'present'),
      );
      const chunks: DefaultPrivilegeGrantSpec[][] = [];
      for (let i = 0; i < items.length; i += 64) chunks.push(items.slice(i, i + 64));
      return chunks.map((grant) => ({
        owner: group.owner,
        ...(group.schema === null ? { scope: { type: 'global' as const } } : { schema: group.schema }),
        grant,
      }));
    });
}

/** Schema bindings: every schema, with its owner when the owner is selected and holds CREATE and USAGE. */
function schemas(
  source: GenerateSource,
  notes: Map<string, string[]>,
  warnings: string[],
): SchemaBindingSpec[] {
  const selected = new Set(source.selected_roles);
  const sorted = [...source.snapshot.schemas].sort((a, b) => compareCodePoints(a.name, b.name));
  return sorted.map((schema) => {
    if (schema.owner === null) return { name: schema.name };
    if (!selected.has(schema.owner)) {
      notes.set(schema.name, [
        `owned by "${schema.owner}", which is outside --roles: the owner is not managed`,
      ]);
      return { name: schema.name };
    }
    const missing = ['CREATE', 'USAGE'].filter((p) => !schema.owner_privileges.includes(p as never));
    if (missing.length > 0) {
      const text = `owner "${schema.owner}" lacks ${missing.join(' and ')} on its own schema; declaring the owner would grant it back, so the owner is left undeclared (decide)`;
      notes.set(schema.name, [text]);
      warnings.push(`schema "${schema.name}": ${text}`);
      return { name: schema.name };
    }
    return { name: schema.name, owner: schema.owner };
  });
}

function inexpressibleLine(access: InexpressibleAccess): string {
  const words = INEXPRESSIBLE_WORDS[access.kind] ?? access.kind;
  switch (access.kind) {
    case 'membership_outside_selection':
      return `"${access.grantee}" is a member of ${access.target}: not exported (add that role to --roles to manage it)`;
    case 'membership_set_option':
      return `"${access.grantee}" is a member of ${access.target} WITH SET FALSE: the membership is exported, the SET option cannot be expressed (plans leave it as it is)`;
    case 'row_security_policy':
      return `"${access.grantee}" is named by row-level security ${access.target}: the spec cannot express it; plans leave that row-level security policy as it is`;
    case 'database_role_setting':
      return `"${access.grantee}" has the setting ${access.privilege} in ${access.target} (ALTER ROLE ... IN DATABASE): the spec cannot express it; not exported, and plans leave it as it is`;
    case 'grant_option':
      return `"${access.grantee}" holds ${access.privilege} on ${access.target} WITH GRANT OPTION: the privilege is exported, the grant option cannot be expressed (plans leave it as it is)`;
    default:
      return `"${access.grantee}" holds ${access.privilege} on ${access.target} (${words}): the spec cannot express it; not exported, and plans neither grant nor revoke it`;
  }
}

/**
 * Generates policy content from what the catalog holds for the selected roles.
 * @example `const { content, warnings } = generatePolicy(source, { mode: 'additive' });`
 */
export function generatePolicy(source: GenerateSource, options: GenerateOptions): GeneratedPolicy {
  const warnings: string[] = [];
  const header: string[] = [];
  const roleNotes = new Map<string, string[]>();
  const schemaNotes = new Map<string, string[]>();
  const selected = new Set(source.selected_roles);

  const roles = source.snapshot.roles
    .filter((role) => selected.has(role.name))
    .map(roleSpec)
    .sort((a, b) => compareCodePoints(a.name, b.name));
  const passwords = source.password_roles === null ? null : new Set(source.password_roles);
  for (const role of roles) {
    const notes: string[] = [];
    if (passwords?.has(role.name)) {
      notes.push(
        'has a password, which is never exported; without a password field it is left as it is. To manage it, add',
        'password: {secretRef: {name: <Secret>}, secretKey: <key>} (the CLI reads ROLEPOLICY_PASSWORD_<SECRET>_<KEY>)',
      );
    }
    if (role.superuser === true) notes.push('superuser: confirm this role must stay a superuser');
    if (notes.length > 0) roleNotes.set(role.name, notes);
  }
  if (passwords === null && roles.length > 0) {
    const text =
      'whether roles have passwords could not be read (pg_authid needs a superuser): passwords are never exported, and roles without a password field keep theirs';
    header.push(text);
    warnings.push(text);
  }

  const { grants, collapsed } = collapseGrants(
    source.snapshot.grants.filter((grant) => selected.has(grant.grantee)),
    source.snapshot.inventory,
  );
  const publicSpecs = publicGrants(source);
  if (publicSpecs.length > 0) {
    header.push(
      "PUBLIC: what it holds beyond PostgreSQL's built-ins (EXECUTE on functions, USAGE on types, CONNECT and TEMPORARY on the database) is written as grants to PUBLIC, each built-in it lost as ensure: absent",
    );
  }
  const roleSpecs: GrantSpec[] = grants.map((grant) => ({
    role: grant.grantee,
    object:
      grant.object_type === 'schema' || grant.object_type === 'database'
        ? { type: grant.object_type, name: grant.name }
        : { type: grant.object_type, schema: grant.schema, name: grant.name },
    privileges: [...grant.privileges],
  }));
  const grantSpecs = [...publicSpecs, ...roleSpecs];
  if (collapsed > 0) {
    header.push(
      `${collapsed} grant(s) cover every object of their kind in a schema and are written as name "*": in authoritative mode objects created later get them too (decide whether that is intended, or list the objects instead)`,
    );
  }

  for (const access of source.inexpressible) {
    const line = inexpressibleLine(access);
    warnings.push(line);
    header.push(line);
  }
  const leftOut = [...source.left_out.predefined, ...source.left_out.bootstrap];
  if (leftOut.length > 0) {
    header.push(`left out although matched (predefined or bootstrap roles): ${leftOut.join(', ')}`);
  }
  if (options.mode === 'authoritative') {
    header.push(
      'authoritative: anything these roles hold that is not listed here is revoked, and roles removed from this policy later are dropped; check with `rolepolicy plan` (expect no changes) first',
    );
  } else {
    header.push(
      'additive: plans only grant; switch to authoritative once `rolepolicy plan` shows no changes.',
    );
  }

  const content: PolicyContent = {
    reconciliation_mode: options.mode,
    roles,
    schemas: schemas(source, schemaNotes, warnings),
    grants: grantSpecs,
    default_privileges: defaultPrivileges(source),
    memberships: memberships(source),
  };
  return { content, notes: { header, roles: roleNotes, schemas: schemaNotes }, warnings };
}
