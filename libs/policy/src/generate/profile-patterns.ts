// Chooses which per-schema roles fold into profiles and the role_pattern each schema binding uses:
// a profile needs two or more schemas with the same grants, one pattern for all its roles, and every
// profile bound to a schema must share that schema's pattern.

import { compareCodePoints } from '../canonical-order.js';
import { substitutePlaceholders } from '../expansion/role-state.js';
import type { ProfileSpec } from '../model/content.js';

/** A role that could be generated from `profile` for `schema` with `spec`. */
export interface Candidate {
  readonly role: string;
  readonly profile: string;
  readonly schema: string;
  readonly spec: ProfileSpec;
  /** canonical JSON of `spec`: equal for roles whose grants are the same up to the schema name. */
  readonly signature: string;
  /** Every role_pattern (with {profile} and {schema}) that gives exactly this role name. */
  readonly patterns: readonly string[];
}

function occurrences(text: string, part: string): number[] {
  const found: number[] = [];
  if (part === '') return found;
  for (let at = text.indexOf(part); at >= 0; at = text.indexOf(part, at + 1)) found.push(at);
  return found;
}

/** Patterns placing one {schema} and one {profile} in `name` so that substitution gives `name` back. */
export function candidatePatterns(name: string, schema: string, profile: string): string[] {
  if (name.includes('{schema}') || name.includes('{profile}')) return [];
  const patterns = new Set<string>();
  for (const s of occurrences(name, schema)) {
    for (const p of occurrences(name, profile)) {
      if (p < s + schema.length && s < p + profile.length) continue;
      const [first, firstLength, firstText, second, secondLength, secondText] =
        s < p
          ? [s, schema.length, '{schema}', p, profile.length, '{profile}']
          : [p, profile.length, '{profile}', s, schema.length, '{schema}'];
      const pattern =
        name.slice(0, first) +
        firstText +
        name.slice(first + firstLength, second) +
        secondText +
        name.slice(second + secondLength);
      if (substitutePlaceholders(pattern, schema, profile) === name) patterns.add(pattern);
    }
  }
  return [...patterns].sort(compareCodePoints);
}

function mostCommon(values: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return [...counts.entries()].sort(([a, x], [b, y]) => y - x || compareCodePoints(a, b))[0]![0];
}

/** The candidates kept (by role), the pattern per bound schema, and one line per role not folded. */
export function choosePatterns(candidates: readonly Candidate[]): {
  chosen: Map<string, Candidate>;
  patterns: Map<string, string>;
  rejected: string[];
} {
  const rejected: string[] = [];
  const reject = (candidate: Candidate, why: string): void => {
    rejected.push(
      `could not fold role "${candidate.role}" (profile "${candidate.profile}", schema "${candidate.schema}"): ${why}`,
    );
  };
  // One signature per profile: the most common one wins; one role per (profile, schema).
  const byProfile = new Map<string, Candidate[]>();
  for (const candidate of [...candidates].sort((a, b) => compareCodePoints(a.role, b.role))) {
    byProfile.set(candidate.profile, [...(byProfile.get(candidate.profile) ?? []), candidate]);
  }
  let kept: Candidate[] = [];
  const profilePattern = new Map<string, string>();
  const patternVotes: string[] = [];
  const groups = new Map<string, Candidate[]>();
  for (const [profile, list] of byProfile) {
    const signature = mostCommon(list.map((c) => c.signature));
    const schemas = new Set<string>();
    const group: Candidate[] = [];
    for (const candidate of list) {
      if (candidate.signature !== signature)
        reject(candidate, `its grants differ from the other roles of profile "${profile}"`);
      else if (schemas.has(candidate.schema))
        reject(candidate, 'another role has the same profile and schema');
      else {
        schemas.add(candidate.schema);
        group.push(candidate);
      }
    }
    const common = group.reduce<readonly string[]>(
      (acc, c) => acc.filter((pattern) => c.patterns.includes(pattern)),
      group[0]?.patterns ?? [],
    );
    if (common.length === 0) {
      for (const candidate of group)
        reject(candidate, 'the names of the roles of this profile follow no common role_pattern');
      continue;
    }
    groups.set(profile, group);
    patternVotes.push(...common);
    profilePattern.set(profile, [...common].sort(compareCodePoints)[0]!);
  }
  // Prefer the pattern most profiles can use, so that one policy-level role_pattern covers them all.
  for (const [profile, group] of groups) {
    const usable = group.reduce<readonly string[]>(
      (acc, c) => acc.filter((pattern) => c.patterns.includes(pattern)),
      group[0]!.patterns,
    );
    profilePattern.set(profile, mostCommon(patternVotes.filter((p) => usable.includes(p))));
    kept.push(...group);
  }
  // Every profile bound to a schema shares that schema's pattern; a profile needs two schemas or more.
  for (let changed = true; changed;) {
    changed = false;
    const perSchema = new Map<string, Candidate[]>();
    for (const c of kept) perSchema.set(c.schema, [...(perSchema.get(c.schema) ?? []), c]);
    const next: Candidate[] = [];
    for (const list of perSchema.values()) {
      const pattern = mostCommon(list.map((c) => profilePattern.get(c.profile)!));
      for (const c of list) {
        if (profilePattern.get(c.profile) === pattern) next.push(c);
        else {
          reject(c, `schema "${c.schema}" already uses role_pattern "${pattern}" for another profile`);
          changed = true;
        }
      }
    }
    const perProfile = new Map<string, number>();
    for (const c of next) perProfile.set(c.profile, (perProfile.get(c.profile) ?? 0) + 1);
    kept = next.filter((c) => {
      if ((perProfile.get(c.profile) ?? 0) >= 2) return true;
      reject(c, 'no other schema has the same grants');
      changed = true;
      return false;
    });
  }
  const chosen = new Map(kept.map((c) => [c.role, c]));
  const patterns = new Map(kept.map((c) => [c.schema, profilePattern.get(c.profile)!]));
  return { chosen, patterns, rejected };
}
