// Role diff: create with full state (config as a separate alter so it runs after every create),
// attribute alters in the fixed order, config set/reset, and comments as set_comment.

import { compareCodePoints } from '../canonical-order.js';
import type { ChangeOf, CreateRoleState, RoleAttribute } from '../model/change.js';
import type { DesiredRole } from '../model/desired.js';
import type { RoleEntry, RoleState } from '../model/state.js';

/** The boolean attributes, in the fixed alter order. */
const FLAGS = [
  'login',
  'superuser',
  'createdb',
  'createrole',
  'inherit',
  'replication',
  'bypassrls',
] as const;

/** Role changes for declared (non-external) roles. External roles are filtered later (unmanaged.ts). */
export function diffRoles(
  desired: readonly DesiredRole[],
  current: ReadonlyMap<string, RoleEntry>,
): {
  creates: readonly ChangeOf<'create_role'>[];
  alters: readonly ChangeOf<'alter_role'>[];
  comments: readonly ChangeOf<'set_comment'>[];
} {
  const creates: ChangeOf<'create_role'>[] = [];
  const alters: ChangeOf<'alter_role'>[] = [];
  const comments: ChangeOf<'set_comment'>[] = [];
  for (const role of [...desired].sort((a, b) => compareCodePoints(a.name, b.name))) {
    const held = current.get(role.name);
    if (held === undefined) {
      creates.push({ kind: 'create_role', name: role.name, state: createState(role.state) });
      const config = configEntries(role.state.config, {});
      if (config.length > 0) alters.push({ kind: 'alter_role', name: role.name, attributes: config });
      continue;
    }
    const attributes = attributeDiff(role.state, held.state);
    if (attributes.length > 0) alters.push({ kind: 'alter_role', name: role.name, attributes });
    if ((role.state.comment ?? null) !== (held.state.comment ?? null)) {
      comments.push({ kind: 'set_comment', name: role.name, comment: role.state.comment ?? null });
    }
  }
  return { creates, alters, comments };
}

/** The create_role state: every attribute, the comment and the expiry; config is never inlined. */
export function createState(state: RoleState): CreateRoleState {
  return {
    login: state.login,
    superuser: state.superuser,
    createdb: state.createdb,
    createrole: state.createrole,
    inherit: state.inherit,
    replication: state.replication,
    bypassrls: state.bypassrls,
    connection_limit: state.connection_limit,
    comment: state.comment ?? null,
    password_valid_until: state.password_valid_until ?? null,
  };
}

/** Attribute entries in the fixed order: flags, connection_limit, valid_until, set_config, reset_config. */
export function attributeDiff(want: RoleState, held: RoleState): readonly RoleAttribute[] {
  const out: RoleAttribute[] = [];
  for (const flag of FLAGS) if (want[flag] !== held[flag]) out.push({ kind: flag, value: want[flag] });
  if (want.connection_limit !== held.connection_limit) {
    out.push({ kind: 'connection_limit', value: want.connection_limit });
  }
  if ((want.password_valid_until ?? null) !== (held.password_valid_until ?? null)) {
    out.push({ kind: 'valid_until', value: want.password_valid_until ?? null });
  }
  return [...out, ...configEntries(want.config, held.config)];
}

/** set_config for new or changed keys, then reset_config for live keys the manifest lacks; each sorted. */
function configEntries(
  want: Readonly<Record<string, string>>,
  held: Readonly<Record<string, string>>,
): readonly RoleAttribute[] {
  const sets: RoleAttribute[] = Object.keys(want)
    .sort(compareCodePoints)
    .filter((p) => held[p] !== want[p])
    .map((parameter) => ({ kind: 'set_config', parameter, value: want[parameter]! }));
  const resets: RoleAttribute[] = Object.keys(held)
    .sort(compareCodePoints)
    .filter((p) => !Object.hasOwn(want, p))
    .map((parameter) => ({ kind: 'reset_config', parameter }));
  return [...sets, ...resets];
}
