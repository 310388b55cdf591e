// Shared value types of the spec (Privilege, ObjectType, Ensure, Duration, names, references, conditions).
// Every kind's schema is assembled from these, so a bound changes in one place for all five CRDs.
import { Type } from '@sinclair/typebox';
import { Int32, List, Nullable, Opt, Str, StringEnum } from './schema-builders.js';

/** Privilege keywords a grant may carry. */
export const PRIVILEGES = [
  'SELECT',
  'INSERT',
  'UPDATE',
  'DELETE',
  'TRUNCATE',
  'REFERENCES',
  'TRIGGER',
  'EXECUTE',
  'USAGE',
  'CREATE',
  'CONNECT',
  'TEMPORARY',
] as const;
/** Object kinds a grant or default privilege targets. */
export const OBJECT_TYPES = [
  'table',
  'view',
  'materialized_view',
  'sequence',
  'function',
  'schema',
  'database',
  'type',
] as const;
/** Content reconciliation modes. */
export const RECONCILIATION_MODES = ['authoritative', 'additive', 'adopt'] as const;
/** Duration pattern (units s, m, h), shared by intervals and ephemeral durations. */
export const DURATION_PATTERN = '^([0-9]+[smh])+$';

/** Privilege enum node. */
export const Privilege = StringEnum(PRIVILEGES);
/** 1..16 privileges of one entry. */
export const Privileges = List(Privilege, { min: 1, max: 16 });
/** ObjectType enum node. */
export const ObjectType = StringEnum(OBJECT_TYPES);
/** present grants, absent explicitly revokes. */
export const Ensure = StringEnum(['present', 'absent'] as const);
/** Reconciliation mode enum node (no default: candidate content must not be defaulted). */
export const ReconciliationMode = StringEnum(RECONCILIATION_MODES);

/** A role name: 1 to 63 characters. */
export const RoleName = Str({ min: 1, max: 63 });

/** A Duration: `^([0-9]+[smh])+$`, at most 64 characters. */
export function Duration(dflt?: string): ReturnType<typeof Str> {
  return Str({ max: 64, pattern: DURATION_PATTERN, ...(dflt !== undefined ? { default: dflt } : {}) });
}

/** `{name}` reference to an object in the same namespace (name 1..253). */
export const NameRef = Type.Object({ name: Str({ min: 1, max: 253 }) });

/** Secret reference (params form): `{key, name}`, both 1..253. */
export const ParamSecretRef = Type.Object({
  key: Str({ min: 1, max: 253 }),
  name: Str({ min: 1, max: 253 }),
});

/**
 * Condition item of policy, plan and candidate status. The spec leaves the strings open; the bounds
 * are those of metav1.Condition, added so CEL rules reading conditions pass cost estimation.
 */
export const Condition = Type.Object({
  type: Str({ min: 1, max: 316 }),
  status: StringEnum(['True', 'False', 'Unknown'] as const),
  reason: Opt(Nullable(Str({ max: 1024 }))),
  message: Opt(Nullable(Str({ max: 32768 }))),
  last_transition_time: Opt(Nullable(Str({ max: 64 }))),
});

/** Access condition item of EphemeralAccessPolicy and EphemeralAccessRequest status. */
export const AccessCondition = Type.Object({
  type: Str({ min: 1, max: 32 }),
  status: Str({ min: 1, max: 16 }),
  bundleHash: Opt(Nullable(Str({ max: 71 }))),
  grantedDuration: Opt(Nullable(Str({ max: 64 }))),
  lastTransitionTime: Opt(Nullable(Str({ max: 64 }))),
  message: Opt(Nullable(Str({ max: 2048 }))),
  reason: Opt(Nullable(Str({ max: 128 }))),
});

/** The identity that recorded a decision (plan and request status) or asked for access (request spec). */
export const Identity = Type.Object({
  username: Str({ min: 1, max: 512 }),
  uid: Opt(Nullable(Str({ max: 128 }))),
  groups: Opt(List(Str({ min: 1, max: 256 }), { max: 64, default: [] })),
});

/** change_summary counters (plan and policy status), each int32 defaulting to 0. */
export const ChangeSummary = Type.Object({
  default_privileges_revoked: Opt(Int32({ default: 0 })),
  default_privileges_set: Opt(Int32({ default: 0 })),
  grants_added: Opt(Int32({ default: 0 })),
  grants_revoked: Opt(Int32({ default: 0 })),
  members_added: Opt(Int32({ default: 0 })),
  members_removed: Opt(Int32({ default: 0 })),
  passwords_set: Opt(Int32({ default: 0 })),
  roles_altered: Opt(Int32({ default: 0 })),
  roles_created: Opt(Int32({ default: 0 })),
  roles_dropped: Opt(Int32({ default: 0 })),
  schema_owners_altered: Opt(Int32({ default: 0 })),
  schemas_created: Opt(Int32({ default: 0 })),
  sessions_terminated: Opt(Int32({ default: 0 })),
  total: Opt(Int32({ default: 0 })),
});
