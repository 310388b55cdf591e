// Field-by-field comparison of a live snapshot with a desired state (authoritative mode), used by the
// live convergence property test: roles, memberships, default privileges, grants and PUBLIC absences.

import {
  PUBLIC_GRANTEE,
  type CatalogSnapshot,
  type DesiredState,
  type GrantEntry,
  type Privilege,
} from '@rolepolicy/policy';

function sortedJson(values: readonly unknown[]): string[] {
  return values.map((value) => JSON.stringify(value)).sort();
}

function grantKey(type: string, schema: string | null, name: string | null, grantee: string): string {
  return JSON.stringify([type, schema, name, grantee]);
}

/** Every mismatch between live and desired, as readable lines (empty when they agree). */
export function liveMismatches(desired: DesiredState, live: CatalogSnapshot): string[] {
  const problems: string[] = [];

  for (const role of desired.roles.filter((candidate) => !candidate.external)) {
    const found = live.roles.find((entry) => entry.name === role.name);
    if (!found) problems.push(`role ${role.name} is missing`);
    else if (JSON.stringify(sortKeys(found.state)) !== JSON.stringify(sortKeys(role.state))) {
      problems.push(
        `role ${role.name}: live ${JSON.stringify(found.state)} != desired ${JSON.stringify(role.state)}`,
      );
    }
  }
  for (const retirement of desired.retirements) {
    if (live.existing_roles.includes(retirement.role))
      problems.push(`retired role ${retirement.role} still exists`);
  }

  const managed = new Set(desired.roles.filter((role) => !role.external).map((role) => role.name));
  const liveEdges = new Map(live.memberships.map((edge) => [`${edge.role}|${edge.member}`, edge]));
  for (const edge of desired.memberships) {
    const found = liveEdges.get(`${edge.role}|${edge.member}`);
    if (!found) problems.push(`membership ${edge.member} in ${edge.role} is missing`);
    else if (found.admin !== edge.admin || found.inherit !== edge.inherit) {
      problems.push(
        `membership ${edge.member} in ${edge.role}: live ${JSON.stringify(found)} != desired ${JSON.stringify(edge)}`,
      );
    }
  }
  const desiredEdges = new Set(desired.memberships.map((edge) => `${edge.role}|${edge.member}`));
  for (const edge of live.memberships) {
    if (managed.has(edge.role) && !desiredEdges.has(`${edge.role}|${edge.member}`)) {
      problems.push(`undeclared membership ${edge.member} in ${edge.role} survived`);
    }
  }

  const liveDefaults = sortedJson(
    live.default_privileges.map(({ owner, scope, on_type, grantee, privileges }) => ({
      owner,
      scope,
      on_type,
      grantee,
      privileges,
    })),
  );
  const desiredDefaults = sortedJson(
    desired.default_privileges.map(({ owner, scope, on_type, grantee, privileges }) => ({
      owner,
      scope,
      on_type,
      grantee,
      privileges,
    })),
  );
  if (JSON.stringify(liveDefaults) !== JSON.stringify(desiredDefaults)) {
    problems.push(
      `default privileges: live ${liveDefaults.join(' ')} != desired ${desiredDefaults.join(' ')}`,
    );
  }

  // Expected role-grantee grants: declared per-object grants plus every object a wildcard covers.
  const identity = (grant: GrantEntry): string | null =>
    grant.object_type === 'function' && grant.name !== null && grant.name !== '*'
      ? (live.function_signatures.find((s) => s.schema === grant.schema && s.declared === grant.name)
          ?.identity ?? grant.name)
      : grant.name;
  const expected = new Map<string, Set<Privilege>>();
  // Owners hold every privilege on their objects implicitly; the catalog reports no grant rows for them.
  const owns = (grantee: string, type: string, schema: string | null, name: string | null): boolean =>
    live.inventory.some(
      (o) => o.kind === type && o.schema === schema && o.name === name && o.owner === grantee,
    );
  const add = (key: string, privileges: readonly Privilege[]): void => {
    const set = expected.get(key) ?? new Set<Privilege>();
    for (const privilege of privileges) set.add(privilege);
    expected.set(key, set);
  };
  for (const grant of desired.grants) {
    if (grant.grantee === PUBLIC_GRANTEE) continue;
    if (grant.name === '*') {
      for (const object of live.inventory.filter(
        (o) => o.kind === grant.object_type && o.schema === grant.schema && o.owner !== grant.grantee,
      )) {
        add(grantKey(object.kind, object.schema, object.name, grant.grantee), grant.privileges);
      }
    } else if (!owns(grant.grantee, grant.object_type, grant.schema, identity(grant))) {
      add(grantKey(grant.object_type, grant.schema, identity(grant), grant.grantee), grant.privileges);
    }
  }
  const actual = new Map<string, Set<Privilege>>();
  for (const grant of live.grants.filter((g) => g.grantee !== PUBLIC_GRANTEE)) {
    actual.set(
      grantKey(grant.object_type, grant.schema, grant.name, grant.grantee),
      new Set(grant.privileges),
    );
  }
  for (const key of new Set([...expected.keys(), ...actual.keys()])) {
    const want = [...(expected.get(key) ?? [])].sort().join(',');
    const have = [...(actual.get(key) ?? [])].sort().join(',');
    if (want !== have) problems.push(`grant ${key}: live [${have}] != desired [${want}]`);
  }

  for (const absence of desired.grant_absences.filter((grant) => grant.grantee === PUBLIC_GRANTEE)) {
    const name = identity(absence);
    const held = live.grants.filter(
      (g) =>
        g.grantee === PUBLIC_GRANTEE &&
        g.object_type === absence.object_type &&
        g.schema === absence.schema &&
        (name === '*' || g.name === name) &&
        g.privileges.some((p) => absence.privileges.includes(p)),
    );
    if (held.length > 0)
      problems.push(`PUBLIC absence on ${absence.schema}.${absence.name} violated: ${JSON.stringify(held)}`);
  }
  return problems;
}

function sortKeys<T>(value: T): T {
  if (Array.isArray(value)) return value.map(sortKeys) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([k, v]) => [k, sortKeys(v)]),
    ) as T;
  }
  return value;
}
