// `generate --suggest-profiles`: folds per-schema roles whose grants are the same up to the schema name
// into profiles x schemas with a role_pattern, then proves the fold neither widens nor narrows anything:
// both forms are expanded by the engine's own expansion and must give the same desired state.

import { compareCodePoints } from '../canonical-order.js';
import { canonicalJson } from '../digest/canonical-json.js';
import { expandPolicy } from '../expansion/expand-policy.js';
import { generatedComment } from '../expansion/role-state.js';
import type {
  DefaultPrivilegeSpec,
  GrantSpec,
  PolicyContent,
  ProfileSpec,
  RoleSpec,
  SchemaBindingSpec,
} from '../model/content.js';
import type { DesiredState } from '../model/desired.js';
import type { GeneratedPolicy } from './generate-policy.js';
import { candidatePatterns, choosePatterns, type Candidate } from './profile-patterns.js';
import { lookalikes, profileTemplate } from './profile-templates.js';

/** The suggestion: the policy to print (folded, or the original when nothing could be proven) and a report. */
export interface ProfileSuggestion {
  readonly policy: GeneratedPolicy;
  readonly report: readonly string[];
  /** True when the printed policy is the folded one and its expansion equals the flat one's. */
  readonly folded: boolean;
}

const COMMENT = /^Generated from profile '(.+)' for schema '(.+)'$/s;

/** Everything the expansion produces that reaches the database (not where it came from). */
function effect(desired: DesiredState): string {
  return canonicalJson({
    roles: desired.roles.map((role) => ({ ...role, generated_from: null })),
    schemas: desired.schemas,
    grants: desired.grants,
    grant_absences: desired.grant_absences,
    default_privileges: desired.default_privileges,
    default_privilege_absences: desired.default_privilege_absences,
    memberships: desired.memberships,
    exclusive_membership_roles: desired.exclusive_membership_roles,
    retirements: desired.retirements,
  });
}

/** Why a role cannot be a profile role, or its candidate (profile, schema, templates). */
function analyseRole(
  role: RoleSpec,
  content: PolicyContent,
  owners: ReadonlyMap<string, string | null>,
): Candidate | string {
  const match = COMMENT.exec(role.comment ?? '');
  if (match === null) return 'its comment is not the one profiles give their roles';
  // COMMENT has two capture groups that always take part in a match.
  const [, profile = '', schema = ''] = match;
  if (generatedComment(profile, schema) !== role.comment) return 'its comment is ambiguous';
  if (!owners.has(schema)) return `schema "${schema}" does not exist`;
  const spec = profileTemplate(role, schema, content, owners);
  if (typeof spec === 'string') return spec;
  const patterns = candidatePatterns(role.name, schema, profile);
  if (patterns.length === 0) return 'its name has no role_pattern with {profile}';
  return { role: role.name, profile, schema, spec, signature: canonicalJson(spec), patterns };
}

/** The content with the chosen candidates folded into profiles and bindings. */
function fold(
  content: PolicyContent,
  chosen: ReadonlyMap<string, Candidate>,
  patterns: ReadonlyMap<string, string>,
): PolicyContent {
  const profiles: Record<string, ProfileSpec> = {};
  const bound = new Map<string, string[]>();
  for (const candidate of chosen.values()) {
    profiles[candidate.profile] ??= candidate.spec;
    bound.set(candidate.schema, [...(bound.get(candidate.schema) ?? []), candidate.profile]);
  }
  const distinct = new Set(patterns.values());
  const policyPattern = distinct.size === 1 ? [...distinct][0]! : null;
  const schemas: SchemaBindingSpec[] = (content.schemas ?? []).map((binding) => {
    const list = bound.get(binding.name);
    if (list === undefined) return binding;
    return {
      ...binding,
      profiles: [...new Set(list)].sort(compareCodePoints),
      ...(policyPattern === null ? { role_pattern: patterns.get(binding.name)! } : {}),
    };
  });
  const grants: GrantSpec[] = (content.grants ?? []).filter((grant) => !chosen.has(grant.role));
  const defaults: DefaultPrivilegeSpec[] = (content.default_privileges ?? []).flatMap((entry) => {
    const grant = entry.grant.filter((item) => !chosen.has(item.role ?? ''));
    return grant.length > 0 ? [{ ...entry, grant }] : [];
  });
  const sortedProfiles = Object.fromEntries(
    Object.keys(profiles)
      .sort(compareCodePoints)
      .map((name) => [name, profiles[name]!]),
  );
  return {
    ...content,
    ...(policyPattern !== null ? { role_pattern: policyPattern } : {}),
    profiles: sortedProfiles,
    roles: (content.roles ?? []).filter((role) => !chosen.has(role.name)),
    schemas,
    grants,
    default_privileges: defaults,
  };
}

/**
 * Folds what it can and proves it; anything it cannot fold or prove stays as generated, and is reported.
 * @example `const { policy, report } = suggestProfiles(generatePolicy(source, { mode: 'additive' }));`
 */
export function suggestProfiles(flat: GeneratedPolicy): ProfileSuggestion {
  const content = flat.content;
  const owners = new Map((content.schemas ?? []).map((binding) => [binding.name, binding.owner ?? null]));
  const report: string[] = [];
  const candidates: Candidate[] = [];
  for (const role of content.roles ?? []) {
    const result = analyseRole(role, content, owners);
    if (typeof result === 'string') {
      // Only roles that look like per-schema roles are worth a line: a generated-looking comment.
      if (
        role.comment !== undefined &&
        role.comment !== null &&
        role.comment.startsWith('Generated from profile')
      )
        report.push(`could not fold role "${role.name}": ${result}`);
    } else candidates.push(result);
  }
  report.push(...lookalikes(content, owners, new Set(candidates.map((c) => c.role))));
  const { chosen, patterns, rejected } = choosePatterns(candidates);
  report.push(...rejected);
  if (chosen.size === 0) {
    report.push('no schemas share grants up to the schema name: nothing folded');
    return { policy: flat, report, folded: false };
  }
  const folded = fold(content, chosen, patterns);
  const before = expandPolicy(content, { policyName: 'generate' });
  const after = expandPolicy(folded, { policyName: 'generate' });
  if (!before.ok || !after.ok || effect(before.desired) !== effect(after.desired)) {
    const why = !after.ok
      ? `the folded policy is invalid (${after.errors.map((e) => `${e.path}: ${e.message}`).join('; ')})`
      : 'expanding it gives a different desired state';
    report.push(`suggestion not kept: ${why}; the policy is printed as generated`);
    return { policy: flat, report, folded: false };
  }
  const byProfile = new Map<string, string[]>();
  for (const candidate of chosen.values())
    byProfile.set(candidate.profile, [...(byProfile.get(candidate.profile) ?? []), candidate.schema]);
  for (const [profile, list] of [...byProfile.entries()].sort(([a], [b]) => compareCodePoints(a, b)))
    report.push(
      `profile "${profile}" x schemas ${list
        .sort(compareCodePoints)
        .map((s) => `"${s}"`)
        .join(', ')}`,
    );
  report.push(
    `folded ${chosen.size} role(s) into ${byProfile.size} profile(s); proof: expanding both forms gives the same roles, grants, default privileges and memberships`,
  );
  const header = [...flat.notes.header];
  for (const [role, notes] of flat.notes.roles) {
    if (chosen.has(role)) header.push(`role "${role}" (now generated from a profile): ${notes.join(' ')}`);
  }
  return {
    policy: { ...flat, content: folded, notes: { ...flat.notes, header } },
    report,
    folded: true,
  };
}
