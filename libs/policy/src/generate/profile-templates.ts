// The profile a per-schema role would be generated from: its grants and default privileges with the
// schema taken out (templates), login/inherit/config; and the roles that share such a profile but cannot
// be folded because a profile would change their comment.

import { compareCodePoints } from '../canonical-order.js';
import { canonicalJson } from '../digest/canonical-json.js';
import type {
  PolicyContent,
  ProfileDefaultPrivilegeSpec,
  ProfileGrantSpec,
  ProfileSpec,
  RoleSpec,
} from '../model/content.js';
import { compareObjectTypes } from '../model/vocabulary.js';

/** Role fields a profile can produce (the comment is the profile's fixed one). */
const PROFILE_ATTRIBUTES = new Set(['name', 'login', 'inherit', 'config', 'comment']);

const byJson = <T>(a: T, b: T): number => compareCodePoints(canonicalJson(a), canonicalJson(b));

/** The schema's own grant first, then by object type and name (as a person writes a profile). */
function compareTemplates(a: ProfileGrantSpec, b: ProfileGrantSpec): number {
  const schemaFirst = Number(a.object.type !== 'schema') - Number(b.object.type !== 'schema');
  return (
    schemaFirst ||
    compareObjectTypes(a.object.type, b.object.type) ||
    compareCodePoints(a.object.name ?? '', b.object.name ?? '') ||
    byJson(a, b)
  );
}

/** The role's access as a profile bound to `schema`, or why it cannot be one. */
export function profileTemplate(
  role: RoleSpec,
  schema: string,
  content: PolicyContent,
  owners: ReadonlyMap<string, string | null>,
): ProfileSpec | string {
  const extra = Object.keys(role).filter((key) => !PROFILE_ATTRIBUTES.has(key));
  if (extra.length > 0) return `it sets ${extra.join(', ')}, which a profile cannot`;
  const grants: ProfileGrantSpec[] = [];
  for (const grant of content.grants ?? []) {
    if (grant.role !== role.name) continue;
    const type = grant.object.type;
    if (type === 'schema' && grant.object.name === schema)
      grants.push({ object: { type }, privileges: grant.privileges });
    else if (type !== 'schema' && type !== 'database' && grant.object.schema === schema)
      grants.push({ object: { type, name: grant.object.name ?? '*' }, privileges: grant.privileges });
    else return `it holds a grant outside schema "${schema}"`;
  }
  const defaults: ProfileDefaultPrivilegeSpec[] = [];
  for (const entry of content.default_privileges ?? []) {
    for (const item of entry.grant) {
      if (item.role !== role.name) continue;
      if (entry.schema !== schema || entry.owner !== owners.get(schema))
        return `it receives default privileges outside schema "${schema}" or from a role other than its owner`;
      defaults.push({ on_type: item.on_type, privileges: item.privileges });
    }
  }
  const config = Object.fromEntries(
    Object.entries(role.config ?? {}).map(([key, value]) => [key, value.split(schema).join('{schema}')]),
  );
  return {
    ...(role.login !== undefined ? { login: role.login } : {}),
    ...(role.inherit !== undefined ? { inherit: role.inherit } : {}),
    ...(Object.keys(config).length > 0 ? { config } : {}),
    grants: grants.sort(compareTemplates),
    ...(defaults.length > 0 ? { default_privileges: defaults.sort(byJson) } : {}),
  };
}

/** The one schema a role's grants name, when there is exactly one and the role's name contains it. */
function soleSchema(role: RoleSpec, content: PolicyContent): string | null {
  const schemas = new Set<string>();
  for (const grant of content.grants ?? []) {
    if (grant.role !== role.name) continue;
    const schema = grant.object.type === 'schema' ? grant.object.name : grant.object.schema;
    schemas.add(schema ?? '');
  }
  const [schema] = [...schemas];
  return schemas.size === 1 && schema !== undefined && schema !== '' && role.name.includes(schema)
    ? schema
    : null;
}

/**
 * One line per group of two or more roles (not already candidates) whose access is the same up to the
 * schema name, also in their names, but whose comment a profile would replace: they are not folded.
 */
export function lookalikes(
  content: PolicyContent,
  owners: ReadonlyMap<string, string | null>,
  candidates: ReadonlySet<string>,
): string[] {
  const groups = new Map<string, string[]>();
  for (const role of content.roles ?? []) {
    if (candidates.has(role.name)) continue;
    const schema = soleSchema(role, content);
    if (schema === null) continue;
    const spec = profileTemplate({ ...role, comment: null }, schema, content, owners);
    if (typeof spec === 'string') continue;
    const key = canonicalJson({ name: role.name.replace(schema, '{schema}'), spec });
    groups.set(key, [...(groups.get(key) ?? []), role.name]);
  }
  return [...groups.values()]
    .filter((roles) => roles.length > 1)
    .map((roles) => roles.sort(compareCodePoints))
    .sort((a, b) => compareCodePoints(a[0]!, b[0]!))
    .map(
      (roles) =>
        `roles ${roles.map((r) => `"${r}"`).join(', ')} have the same access up to the schema name but are not folded: ` +
        `a profile gives its roles the comment "Generated from profile '<profile>' for schema '<schema>'", which would change theirs ` +
        `(set that comment on them to fold them)`,
    );
}
