// recorded.changes[]: each engine change projected into the artifact's shape, with its priority, the
// managed key it reconciles and what was removed from it (comments, config values, password sources).

import { compareCodePoints, type Change, type DesiredState, type RoleAttribute } from '@rolepolicy/policy';

import type {
  ArtifactAttribute,
  ArtifactChange,
  ManagedKey,
  Omission,
  Priority,
  RecordedChange,
} from './artifact.schema.js';

/** Priority by change kind only, never by environment (engine notes 6.3). */
export function priorityOf(kind: Change['kind']): Priority {
  switch (kind) {
    case 'drop_role':
    case 'drop_owned':
    case 'reassign_owned':
    case 'terminate_sessions':
    case 'alter_schema_owner':
    case 'set_password':
      return 'High';
    case 'revoke':
    case 'revoke_default_privilege':
    case 'remove_member':
    case 'alter_role':
    case 'add_member':
      return 'Review';
    case 'create_role':
    case 'create_schema':
    case 'ensure_schema_owner_privileges':
    case 'set_comment':
    case 'grant':
    case 'set_default_privilege':
      return 'Informational';
    default: {
      const unreachable: never = kind;
      return unreachable;
    }
  }
}

/**
 * Changes whose SQL would carry a sensitive value: a password (verifier), a role comment, or a role config
 * value. The SQL preview is omitted when any exists; their indices are listed instead.
 */
export function isSensitive(change: Change): boolean {
  switch (change.kind) {
    case 'set_password':
      return true;
    case 'create_role':
      return change.state.comment !== null;
    case 'set_comment':
      return change.comment !== null;
    case 'alter_role':
      return change.attributes.some((a) => a.kind === 'set_config');
    default:
      return false;
  }
}

const omitted = (field: string): Omission => ({ field, reason: 'sensitive_value' });

function attribute(a: RoleAttribute): ArtifactAttribute {
  switch (a.kind) {
    case 'set_config':
    case 'reset_config':
      return { kind: a.kind, parameter: a.parameter };
    case 'connection_limit':
      return { kind: 'connection_limit', value: a.value };
    case 'valid_until':
      return { kind: 'valid_until', value: a.value };
    default:
      return { kind: a.kind, value: a.value };
  }
}

/** The artifact's view of a change and the fields removed from it. */
export function projectChange(
  change: Change,
  desired: DesiredState,
): { readonly change: ArtifactChange; readonly omissions: readonly Omission[] } {
  switch (change.kind) {
    case 'create_role': {
      const { comment, password_valid_until, ...flags } = change.state;
      const config = desired.roles.find((r) => r.name === change.name)?.state.config ?? {};
      const parameters = Object.keys(config).sort(compareCodePoints);
      return {
        change: {
          kind: 'create_role',
          name: change.name,
          state: {
            ...flags,
            comment_present: comment !== null,
            config_parameters: parameters,
            password_valid_until,
          },
        },
        omissions: [
          ...(comment !== null ? [omitted('state.comment')] : []),
          ...(parameters.length > 0 ? [omitted('state.config_values')] : []),
        ],
      };
    }
    case 'alter_role': {
      const omissions = change.attributes.flatMap((a, i) =>
        a.kind === 'set_config' ? [omitted(`attributes[${i}].value`)] : [],
      );
      return {
        change: { kind: 'alter_role', name: change.name, attributes: change.attributes.map(attribute) },
        omissions,
      };
    }
    case 'set_comment':
      return {
        change: { kind: 'set_comment', name: change.name, comment_present: change.comment !== null },
        omissions: change.comment !== null ? [omitted('comment')] : [],
      };
    case 'set_password':
      // The source version names a Secret, not a password, but it is password material all the same.
      return { change: { kind: 'set_password', name: change.name }, omissions: [omitted('password')] };
    case 'grant':
      return { change: { ...change, privileges: [...change.privileges] }, omissions: [] };
    case 'revoke':
      return { change: { ...change, privileges: [...change.privileges] }, omissions: [] };
    case 'ensure_schema_owner_privileges':
    case 'set_default_privilege':
    case 'revoke_default_privilege':
      return { change: { ...change, privileges: [...change.privileges] }, omissions: [] };
    case 'create_schema':
    case 'alter_schema_owner':
    case 'add_member':
    case 'remove_member':
    case 'reassign_owned':
    case 'drop_owned':
    case 'terminate_sessions':
    case 'drop_role':
      return { change: { ...change }, omissions: [] };
    default: {
      const unreachable: never = change;
      return unreachable;
    }
  }
}

/** The managed key a change reconciles (the spec's change `source.managed_key`). */
export function managedKeyOf(change: Change, desired: DesiredState): ManagedKey {
  switch (change.kind) {
    case 'create_role':
    case 'alter_role':
    case 'set_comment':
    case 'set_password':
    case 'drop_role':
      return { kind: 'role', name: change.name };
    case 'drop_owned':
    case 'terminate_sessions':
      return { kind: 'role', name: change.role };
    case 'reassign_owned':
      return { kind: 'role', name: change.from_role };
    case 'create_schema': {
      const owned = desired.schemas.some((s) => s.name === change.name && s.owner !== null);
      return { kind: 'schema_facet', schema: change.name, facet: owned ? 'owner' : 'bindings' };
    }
    case 'alter_schema_owner':
    case 'ensure_schema_owner_privileges':
      return { kind: 'schema_facet', schema: change.name, facet: 'owner' };
    case 'grant':
    case 'revoke':
      return {
        kind: 'grant',
        role: change.role,
        object_type: change.object_type,
        name: change.name,
        schema: change.schema,
      };
    case 'set_default_privilege':
    case 'revoke_default_privilege':
      return {
        kind: 'default_privilege',
        owner: change.owner,
        scope: change.scope,
        on_type: change.on_type,
        grantee: change.grantee,
      };
    case 'add_member':
    case 'remove_member':
      return { kind: 'membership', role: change.role, member: change.member };
    default: {
      const unreachable: never = change;
      return unreachable;
    }
  }
}

/** recorded.changes[] in plan order. `document` names the policy document (null: no source recorded). */
export function recordChanges(
  changes: readonly Change[],
  desired: DesiredState,
  document: string | null,
): RecordedChange[] {
  return changes.map((change, index) => {
    const projected = projectChange(change, desired);
    return {
      index,
      priority: priorityOf(change.kind),
      change: projected.change,
      source: document === null ? null : { document, managed_key: managedKeyOf(change, desired) },
      ...(projected.omissions.length > 0 ? { omissions: [...projected.omissions] } : {}),
    };
  });
}
