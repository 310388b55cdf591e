// Structural pass for memberships, schema bindings and retirements: shapes, bounds, PUBLIC reservations,
// the role_pattern `{profile}` rule and the per-entry retirement rules (no self-reassign, no pg_* roles).

import type { MemberSpec, MembershipSpec, RetirementSpec, SchemaBindingSpec } from '../model/index.js';
import { located, NAME, PATTERN, type ReadContext, readRoleField } from './context.js';
import { keyPath, report } from './errors.js';
import { MESSAGES } from './messages.js';
import { readArray, readBoolean, readObject, readString, readStringValue } from './reader.js';

/** Reads a role_pattern field (binding or policy level): 1..128 characters containing `{profile}`. */
export function readRolePattern(
  ctx: ReadContext,
  obj: Readonly<Record<string, unknown>>,
  path: string,
): string | null | undefined {
  const pattern = readString(ctx, obj, 'role_pattern', path, PATTERN, true);
  if (pattern != null && !pattern.includes('{profile}')) {
    report(ctx, keyPath(path, 'role_pattern'), MESSAGES.rolePatternProfile);
    return undefined;
  }
  return pattern;
}

function readMember(
  ctx: ReadContext,
  value: unknown,
  path: string,
  role: string | null | undefined,
): MemberSpec | undefined {
  const obj = readObject(ctx, value, path, ['admin', 'inherit', 'name']);
  if (obj === undefined) return undefined;
  const before = ctx.errors.length;
  const name = readRoleField(ctx, obj, 'name', path, { required: true, publicAs: 'a member' });
  const inherit = readBoolean(ctx, obj, 'inherit', path, true);
  const admin = readBoolean(ctx, obj, 'admin', path, true);
  if (name != null && name === role) report(ctx, keyPath(path, 'name'), MESSAGES.selfMembership);
  if (ctx.errors.length > before || name == null) return undefined;
  return located(
    ctx,
    { name, ...(inherit !== undefined ? { inherit } : {}), ...(admin !== undefined ? { admin } : {}) },
    path,
  );
}

/** Reads one `memberships[]` entry. */
export function readMembership(ctx: ReadContext, value: unknown, path: string): MembershipSpec | undefined {
  const obj = readObject(ctx, value, path, ['exclusive', 'members', 'role']);
  if (obj === undefined) return undefined;
  const before = ctx.errors.length;
  const role = readRoleField(ctx, obj, 'role', path, { required: true, publicAs: 'a membership role' });
  const exclusive = readBoolean(ctx, obj, 'exclusive', path, false);
  // Invalid members are dropped on their own, so the stanza's other edges still reach the cross-entry rules.
  const stanzaValid = ctx.errors.length === before;
  const members = readArray(ctx, obj, 'members', path, { max: 512, required: true }, (item, at) =>
    readMember(ctx, item, at, role),
  );
  if (!stanzaValid || role == null || members === undefined) return undefined;
  return located(ctx, { role, members, ...(exclusive != null ? { exclusive } : {}) }, path);
}

/** Reads one `schemas[]` binding. */
export function readSchemaBinding(
  ctx: ReadContext,
  value: unknown,
  path: string,
): SchemaBindingSpec | undefined {
  const obj = readObject(ctx, value, path, ['name', 'owner', 'profiles', 'role_pattern']);
  if (obj === undefined) return undefined;
  const before = ctx.errors.length;
  const name = readString(ctx, obj, 'name', path, NAME, false);
  if (obj['name'] == null) report(ctx, keyPath(path, 'name'), MESSAGES.required);
  const owner = readRoleField(ctx, obj, 'owner', path, { required: false, publicAs: 'a schema owner' });
  const pattern = readRolePattern(ctx, obj, path);
  // Profile-list errors drop only the offending items, so the binding still takes part in later rules.
  const bindingValid = ctx.errors.length === before;
  const profiles = readArray(ctx, obj, 'profiles', path, { max: 64 }, (item, at) =>
    readStringValue(ctx, item, at, NAME),
  );
  const seen = new Set<string>();
  profiles?.forEach((profile) => {
    if (seen.has(profile))
      report(ctx, keyPath(path, 'profiles'), MESSAGES.duplicateProfileInBinding(profile));
    seen.add(profile);
  });
  if (!bindingValid || name == null) return undefined;
  return located(
    ctx,
    {
      name,
      ...(owner !== undefined ? { owner } : {}),
      ...(profiles !== undefined ? { profiles } : {}),
      ...(pattern !== undefined ? { role_pattern: pattern } : {}),
    },
    path,
  );
}

/** Reads one `retirements[]` entry. */
export function readRetirement(ctx: ReadContext, value: unknown, path: string): RetirementSpec | undefined {
  const obj = readObject(ctx, value, path, ['drop_owned', 'reassign_owned_to', 'role', 'terminate_sessions']);
  if (obj === undefined) return undefined;
  const before = ctx.errors.length;
  const role = readRoleField(ctx, obj, 'role', path, { required: true, publicAs: 'a retirement role' });
  const reassign = readRoleField(ctx, obj, 'reassign_owned_to', path, {
    required: false,
    publicAs: 'a reassign target',
  });
  const dropOwned = readBoolean(ctx, obj, 'drop_owned', path, false);
  const terminate = readBoolean(ctx, obj, 'terminate_sessions', path, false);
  if (role != null && reassign === role)
    report(ctx, keyPath(path, 'reassign_owned_to'), MESSAGES.selfReassign);
  if (role != null && role.startsWith('pg_')) report(ctx, keyPath(path, 'role'), MESSAGES.retirePredefined);
  if (ctx.errors.length > before || role == null) return undefined;
  return located(
    ctx,
    {
      role,
      ...(reassign !== undefined ? { reassign_owned_to: reassign } : {}),
      ...(dropOwned != null ? { drop_owned: dropOwned } : {}),
      ...(terminate != null ? { terminate_sessions: terminate } : {}),
    },
    path,
  );
}
