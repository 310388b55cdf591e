// The expansion pipeline over validated content: profiles x schema bindings into roles, grants and default
// privileges, then one-off entries, then the checks that only the expanded graph can answer (docs/policy-validation.md).

import { compareCodePoints } from '../canonical-order.js';
import {
  PUBLIC_GRANTEE,
  type DesiredRole,
  type DesiredState,
  type GrantObject,
  type MembershipEdge,
  type Retirement,
  type SchemaEntry,
} from '../model/index.js';
import { type ErrorSink, indexPath, keyPath, report } from '../validation/errors.js';
import { canonicalConfigValue } from '../validation/guc.js';
import { RESERVED_ROLE_NAMES } from '../validation/context.js';
import { MESSAGES } from '../validation/messages.js';
import { charLength, utf8Length } from '../validation/reader.js';
import { compareMembershipKeys } from '../canonical-order.js';
import type { ExpansionInput } from './expansion-input.js';
import { checkMembershipCycles, checkRetiredReferences } from './reference-checks.js';
import { checkDefaultConflicts, checkGrantConflicts } from './conflicts.js';
import type { DefaultItem, GrantItem } from './items.js';
import { mergeDefaults, mergeGrants } from './items.js';
import {
  DEFAULT_ROLE_STATE,
  declaredRoleState,
  generatedRoleState,
  passwordSource,
  substitutePlaceholders,
} from './role-state.js';

/** The fallback role_pattern when neither the binding nor the policy sets one. */
export const DEFAULT_ROLE_PATTERN = '{schema}-{profile}';

interface Collected {
  readonly roles: DesiredRole[];
  /** Role name -> path of the entry that produced it, and whether it is a one-off (roles[]) entry. */
  readonly rolePaths: Map<string, { readonly path: string; readonly oneOff: boolean }>;
  readonly grants: GrantItem[];
  readonly defaults: DefaultItem[];
}

/** Normalises a top-level grant target: schema grants key on name, database grants carry no schema. */
function grantTarget(object: GrantObject): { schema: string | null; name: string | null } {
  switch (object.type) {
    case 'schema':
      return { schema: null, name: object.name ?? object.schema ?? null };
    case 'database':
      return { schema: null, name: object.name ?? null };
    default:
      return { schema: object.schema ?? null, name: object.name ?? null };
  }
}

function checkGeneratedName(sink: ErrorSink, name: string, path: string): boolean {
  const bytes = utf8Length(name);
  if (bytes > 63) report(sink, path, MESSAGES.generatedNameTooLong(name, bytes));
  else if (name === PUBLIC_GRANTEE) report(sink, path, MESSAGES.publicReserved('a generated role name'));
  else if (name.startsWith('pg_')) report(sink, path, MESSAGES.generatedPgPrefix(name));
  else if (RESERVED_ROLE_NAMES.includes(name)) report(sink, path, MESSAGES.reservedRoleName(name));
  else return true;
  return false;
}

function addRole(sink: ErrorSink, out: Collected, role: DesiredRole, path: string, namePath: string): void {
  const oneOff = role.generated_from === null;
  const other = out.rolePaths.get(role.name);
  if (other !== undefined) {
    // Duplicates within roles[] are reported by the list-map rule; generated collisions here.
    if (!(oneOff && other.oneOff))
      report(sink, namePath, MESSAGES.duplicateGeneratedRole(role.name, other.path));
    return;
  }
  out.rolePaths.set(role.name, { path, oneOff });
  out.roles.push(role);
}

/** Step 5 of the pipeline: every binding x profile, in declaration order. */
function expandBindings(sink: ErrorSink, input: ExpansionInput, out: Collected): void {
  const { content, locations, root } = input;
  const profiles = content.profiles ?? {};
  const reportedConfig = new Set<string>();
  for (const binding of content.schemas ?? []) {
    const bindingPath = locations.get(binding) ?? root;
    const owner = binding.owner ?? content.default_owner ?? null;
    const seen = new Set<string>();
    (binding.profiles ?? []).forEach((profileName, index) => {
      const profile = Object.prototype.hasOwnProperty.call(profiles, profileName)
        ? profiles[profileName]
        : undefined;
      // A repeated profile is reported by the binding rule; expanding it twice would only add noise.
      if (profile === undefined || seen.has(profileName)) return;
      seen.add(profileName);
      const at = indexPath(keyPath(bindingPath, 'profiles'), index);
      const pattern = binding.role_pattern ?? content.role_pattern ?? DEFAULT_ROLE_PATTERN;
      const roleName = substitutePlaceholders(pattern, binding.name, profileName);
      if (!checkGeneratedName(sink, roleName, at)) return;
      const state = generatedRoleState(profileName, profile, binding.name);
      const profilePath = locations.get(profile) ?? keyPath(keyPath(root, 'profiles'), profileName);
      for (const [key, value] of Object.entries(profile.config ?? {})) {
        const substituted = substitutePlaceholders(value, binding.name, profileName);
        const configPath = keyPath(keyPath(profilePath, 'config'), key);
        if (reportedConfig.has(configPath)) continue;
        if (canonicalConfigValue(key, substituted) === undefined) {
          reportedConfig.add(configPath);
          report(sink, configPath, MESSAGES.configListSyntax(key.toLowerCase()));
        } else if (charLength(substituted) > 256) {
          reportedConfig.add(configPath);
          report(sink, configPath, MESSAGES.configValueTooLongAfterSubstitution(binding.name));
        }
      }
      addRole(
        sink,
        out,
        {
          name: roleName,
          state,
          external: false,
          preserve_undeclared_grants: false,
          password: null,
          generated_from: { profile: profileName, schema: binding.name },
        },
        at,
        at,
      );
      for (const template of profile.grants ?? []) {
        const type = template.object.type;
        const path = locations.get(template) ?? profilePath;
        const target =
          type === 'schema'
            ? { schema: null, name: binding.name }
            : type === 'database'
              ? { schema: null, name: template.object.name ?? null }
              : { schema: binding.name, name: template.object.name ?? '*' };
        out.grants.push({
          grantee: roleName,
          object_type: type,
          ...target,
          privileges: template.privileges,
          ensure: template.ensure ?? 'present',
          path,
        });
      }
      const defaults = profile.default_privileges ?? [];
      if (defaults.length === 0) return;
      if (owner === null) {
        report(sink, keyPath(bindingPath, 'owner'), MESSAGES.bindingOwnerMissing(profileName));
        return;
      }
      for (const item of defaults) {
        const grantee = item.role ?? roleName;
        if (grantee === owner) {
          report(sink, at, MESSAGES.defaultGranteeIsOwner(owner));
          continue;
        }
        out.defaults.push({
          owner,
          scope: { type: 'schema', schema: binding.name },
          on_type: item.on_type,
          grantee,
          privileges: item.privileges,
          ensure: item.ensure ?? 'present',
          path: locations.get(item) ?? profilePath,
        });
      }
    });
  }
}

/** Step 7: one-off roles, grants and default privileges (owner falls back to default_owner: step 8). */
function expandOneOffs(sink: ErrorSink, input: ExpansionInput, out: Collected): void {
  const { content, locations, root, policyName } = input;
  for (const role of content.roles ?? []) {
    const path = locations.get(role) ?? root;
    addRole(
      sink,
      out,
      {
        name: role.name,
        state: declaredRoleState(role),
        external: role.external ?? false,
        preserve_undeclared_grants: role.preserve_undeclared_grants ?? false,
        password: role.external === true ? null : passwordSource(role.password, role.name, policyName),
        generated_from: null,
      },
      path,
      keyPath(path, 'name'),
    );
  }
  for (const grant of content.grants ?? []) {
    out.grants.push({
      grantee: grant.role,
      object_type: grant.object.type,
      ...grantTarget(grant.object),
      privileges: grant.privileges,
      ensure: grant.ensure ?? 'present',
      path: locations.get(grant) ?? root,
    });
  }
  for (const block of content.default_privileges ?? []) {
    const owner = block.owner ?? content.default_owner ?? null;
    if (owner === null) continue;
    const schema = block.schema ?? (block.scope?.type === 'schema' ? (block.scope.schema ?? null) : null);
    const scope = schema === null ? ({ type: 'global' } as const) : ({ type: 'schema', schema } as const);
    for (const item of block.grant) {
      if (item.role == null) continue;
      out.defaults.push({
        owner,
        scope,
        on_type: item.on_type,
        grantee: item.role,
        privileges: item.privileges,
        ensure: item.ensure ?? 'present',
        path: locations.get(item) ?? locations.get(block) ?? root,
      });
    }
  }
}

/**
 * Roles referenced as grantees or granted roles without a declaration. They join the desired graph as
 * implicit external roles, so inspection reads their grants and memberships (and the plan converges)
 * while nothing ever creates, alters or drops them. PUBLIC and predefined `pg_*` roles are not collected.
 */
function undeclaredReferences(input: ExpansionInput, out: Collected): readonly string[] {
  const declared = out.rolePaths;
  const names = new Set<string>();
  for (const item of [...out.grants, ...out.defaults]) {
    if (item.grantee !== PUBLIC_GRANTEE && !declared.has(item.grantee)) names.add(item.grantee);
  }
  for (const membership of input.content.memberships ?? []) {
    if (!membership.role.startsWith('pg_') && !declared.has(membership.role)) names.add(membership.role);
  }
  return [...names].sort(compareCodePoints);
}

/** An undeclared referenced role, managed as `external: true` would be. */
function implicitExternalRole(name: string): DesiredRole {
  return {
    name,
    state: DEFAULT_ROLE_STATE,
    external: true,
    preserve_undeclared_grants: false,
    password: null,
    generated_from: null,
  };
}

/**
 * A schema's owner holds CREATE and USAGE as owner privileges, so a grant of them to the owner adds nothing
 * and would never round-trip (the catalog never lists an owner's own entry as a grant): it is dropped with
 * a warning, as other tools' policies often spell it out. Asserting it absent contradicts ownership and is
 * an error. Retired roles must not also be declared. Returns the warnings.
 */
function checkReferences(
  sink: ErrorSink,
  input: ExpansionInput,
  out: Collected,
  schemas: readonly SchemaEntry[],
): string[] {
  const declared = out.rolePaths;
  const owners = new Map(schemas.map((s) => [s.name, s.owner]));
  const warnings: string[] = [];
  const ownersOwn = (item: GrantItem): boolean =>
    item.object_type === 'schema' && item.name !== null && owners.get(item.name) === item.grantee;
  for (const item of out.grants.filter(ownersOwn)) {
    if (item.ensure === 'absent')
      report(sink, item.path, MESSAGES.ownerSchemaGrant(item.name!, item.grantee));
    else warnings.push(MESSAGES.ownerSchemaGrantImplied(item.path, item.name!, item.grantee));
  }
  const kept = out.grants.filter((item) => !(ownersOwn(item) && item.ensure !== 'absent'));
  out.grants.splice(0, out.grants.length, ...kept);
  const { content, locations, root } = input;
  for (const retirement of content.retirements ?? []) {
    if (declared.has(retirement.role)) {
      report(
        sink,
        keyPath(locations.get(retirement) ?? root, 'role'),
        MESSAGES.retiredAndDesired(retirement.role),
      );
    }
  }
  return warnings;
}

/** A Kubernetes object name: DNS subdomain, at most 253 characters. */
const KUBERNETES_NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/**
 * Generated passwords are stored in a Secret named `{policy}-gen-{role}` by default; role names with
 * underscores or capitals make that an invalid Secret name. Warn (the CLI needs no Secret) instead of failing.
 */
function secretNameWarnings(roles: readonly DesiredRole[]): readonly string[] {
  return roles.flatMap((role) =>
    role.password?.kind === 'generate' &&
    (!KUBERNETES_NAME.test(role.password.secretName) || role.password.secretName.length > 253)
      ? [MESSAGES.generatedSecretName(role.name, role.password.secretName)]
      : [],
  );
}

/** Step 18: `role=X` config on a role needs a declared membership of that role in X. */
function checkConfigRole(sink: ErrorSink, out: Collected, memberships: readonly MembershipEdge[]): void {
  const edges = new Set(memberships.map((m) => JSON.stringify([m.role, m.member])));
  for (const role of out.roles) {
    const target = role.state.config['role'];
    if (target === undefined || !out.rolePaths.has(target)) continue;
    if (!edges.has(JSON.stringify([target, role.name]))) {
      const path = out.rolePaths.get(role.name)!.path;
      report(sink, keyPath(keyPath(path, 'config'), 'role'), MESSAGES.configRoleMembership(target));
    }
  }
}

/**
 * Expands validated content into the desired graph, reporting the errors only expansion can find
 * (generated names, duplicates, undeclared references, ensure conflicts). Lists come out canonically sorted.
 */
export function expandContent(sink: ErrorSink, input: ExpansionInput): DesiredState {
  const { content } = input;
  const out: Collected = { roles: [], rolePaths: new Map(), grants: [], defaults: [] };
  expandBindings(sink, input, out);
  expandOneOffs(sink, input, out);

  const schemas: SchemaEntry[] = (content.schemas ?? []).map((binding) => {
    const owner = binding.owner ?? content.default_owner ?? null;
    return { name: binding.name, owner, owner_privileges: owner === null ? [] : ['CREATE', 'USAGE'] };
  });
  const memberships: MembershipEdge[] = (content.memberships ?? []).flatMap((m) =>
    m.members.map((member) => ({
      role: m.role,
      member: member.name,
      inherit: member.inherit ?? true,
      admin: member.admin ?? false,
    })),
  );

  const ownerGrantWarnings = checkReferences(sink, input, out, schemas);
  checkRetiredReferences(sink, input);
  checkMembershipCycles(sink, input);
  checkGrantConflicts(sink, out.grants);
  checkDefaultConflicts(sink, out.defaults);
  checkConfigRole(sink, out, memberships);

  const implicit = undeclaredReferences(input, out);
  const warnings: string[] = [
    ...ownerGrantWarnings,
    ...secretNameWarnings(out.roles),
    ...implicit.map(MESSAGES.undeclaredReference),
  ];
  const defaultOwner = content.default_owner;
  if (defaultOwner != null && !out.rolePaths.has(defaultOwner))
    warnings.push(MESSAGES.undeclaredDefaultOwner(defaultOwner));

  const retirements: Retirement[] = (content.retirements ?? []).map((r) => ({
    role: r.role,
    reassign_owned_to: r.reassign_owned_to ?? null,
    drop_owned: r.drop_owned ?? false,
    terminate_sessions: r.terminate_sessions ?? false,
  }));
  const byName = <T extends { readonly name: string }>(a: T, b: T): number =>
    compareCodePoints(a.name, b.name);
  const exclusive = new Set(
    (content.memberships ?? []).filter((m) => m.exclusive === true).map((m) => m.role),
  );

  return {
    reconciliation_mode: content.reconciliation_mode ?? 'authoritative',
    roles: [...out.roles, ...implicit.map(implicitExternalRole)].sort(byName),
    schemas: schemas.sort(byName),
    grants: mergeGrants(out.grants.filter((g) => g.ensure === 'present')),
    grant_absences: mergeGrants(out.grants.filter((g) => g.ensure === 'absent')),
    default_privileges: mergeDefaults(out.defaults.filter((d) => d.ensure === 'present')),
    default_privilege_absences: mergeDefaults(out.defaults.filter((d) => d.ensure === 'absent')),
    memberships: memberships.sort(compareMembershipKeys),
    exclusive_membership_roles: [...exclusive].sort(compareCodePoints),
    retirements: retirements.sort((a, b) => compareCodePoints(a.role, b.role)),
    warnings,
  };
}
