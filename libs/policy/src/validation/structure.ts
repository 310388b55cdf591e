// The structural pass: `unknown` -> PolicyContent, checking every shape, bound and per-entry rule.
// Invalid entries are left out of the result (their errors recorded), so the later passes see only clean data.

import { RECONCILIATION_MODES, type PolicyContent } from '../model/index.js';
import { type ReadContext, readRoleField } from './context.js';
import { keyPath, report } from './errors.js';
import { MESSAGES } from './messages.js';
import { isObject, readArray, readEnum, readField, readObject } from './reader.js';
import { readDefaultPrivilege, readGrant } from './structure-access.js';
import { readMembership, readRetirement, readRolePattern, readSchemaBinding } from './structure-bindings.js';
import { readProfiles, readRole } from './structure-roles.js';

/** PostgresPolicy.spec fields that are not content: accepted and ignored, so a whole spec validates. */
const POLICY_ONLY_FIELDS = [
  'allow_schema_owner_transfers',
  'approval',
  'connection',
  'interval',
  'mode',
  'suspend',
];

const CONTENT_KEYS = [
  'default_owner',
  'default_privileges',
  'grants',
  'memberships',
  'profiles',
  'reconciliation_mode',
  'retirements',
  'role_pattern',
  'roles',
  'schemas',
];

/** Reads policy content; returns undefined only when the root is not an object. */
export function readContent(ctx: ReadContext, raw: unknown, root: string): PolicyContent | undefined {
  if (!isObject(raw)) {
    report(ctx, root, MESSAGES.mustBeObject);
    return undefined;
  }
  const obj = readObject(ctx, raw, root, [...CONTENT_KEYS, ...POLICY_ONLY_FIELDS].sort());
  if (obj === undefined) return undefined;
  const defaultOwner = readRoleField(ctx, obj, 'default_owner', root, {
    required: false,
    publicAs: 'an owner',
  });
  const mode = readEnum(ctx, obj, 'reconciliation_mode', root, RECONCILIATION_MODES, false);
  const rolePattern = readRolePattern(ctx, obj, root);
  const roles = readArray(ctx, obj, 'roles', root, { max: 1024 }, (v, at) => readRole(ctx, v, at));
  const rawProfiles = readField(obj, 'profiles', false);
  const profiles =
    rawProfiles === undefined ? undefined : readProfiles(ctx, rawProfiles, keyPath(root, 'profiles'));
  const schemas = readArray(ctx, obj, 'schemas', root, { max: 1024 }, (v, at) =>
    readSchemaBinding(ctx, v, at),
  );
  const grants = readArray(ctx, obj, 'grants', root, { max: 4096 }, (v, at) => readGrant(ctx, v, at));
  const defaults = readArray(ctx, obj, 'default_privileges', root, { max: 512 }, (v, at) =>
    readDefaultPrivilege(ctx, v, at, defaultOwner),
  );
  const memberships = readArray(ctx, obj, 'memberships', root, { max: 2048 }, (v, at) =>
    readMembership(ctx, v, at),
  );
  const retirements = readArray(ctx, obj, 'retirements', root, { max: 512 }, (v, at) =>
    readRetirement(ctx, v, at),
  );
  return {
    ...(defaultOwner !== undefined ? { default_owner: defaultOwner } : {}),
    ...(defaults !== undefined ? { default_privileges: defaults } : {}),
    ...(grants !== undefined ? { grants } : {}),
    ...(memberships !== undefined ? { memberships } : {}),
    ...(profiles !== undefined ? { profiles } : {}),
    ...(mode != null ? { reconciliation_mode: mode } : {}),
    ...(retirements !== undefined ? { retirements } : {}),
    ...(rolePattern !== undefined ? { role_pattern: rolePattern } : {}),
    ...(roles !== undefined ? { roles } : {}),
    ...(schemas !== undefined ? { schemas } : {}),
  };
}
