// Structural pass for grants and default privileges (top-level and profile templates): shapes, bounds,
// target normalisation rules, the on_type matrix and the spec's scope/schema and database-name messages.

import {
  ENSURES,
  OBJECT_TYPES,
  type DefaultPrivilegeGrantSpec,
  type DefaultPrivilegeScopeSpec,
  type DefaultPrivilegeSpec,
  type GrantObject,
  type GrantSpec,
  type ObjectType,
  type ProfileDefaultPrivilegeSpec,
  type ProfileGrantSpec,
} from '../model/index.js';
import { NAME, located, type ReadContext, readPrivileges, readRoleField } from './context.js';
import { keyPath, report } from './errors.js';
import { MESSAGES } from './messages.js';
import { DEFAULT_PRIVILEGE_NEVER } from './privileges.js';
import { readArray, readEnum, readField, readObject, readString, utf8Length } from './reader.js';

const OBJECT_NAME = { min: 1, max: 256 } as const;

function checkObjectNameBytes(ctx: ReadContext, type: ObjectType, name: string, at: string): void {
  if (type !== 'function' && name !== '*' && utf8Length(name) > 63) report(ctx, at, MESSAGES.objectNameBytes);
}

/** Reads `grants[].object`, applying the per-type target rules (schema, database and wildcard forms). */
function readGrantObject(ctx: ReadContext, value: unknown, path: string): GrantObject | undefined {
  const obj = readObject(ctx, value, path, ['name', 'schema', 'type']);
  if (obj === undefined) return undefined;
  const before = ctx.errors.length;
  const type = readEnum(ctx, obj, 'type', path, OBJECT_TYPES, false);
  if (obj['type'] === undefined || obj['type'] === null)
    report(ctx, keyPath(path, 'type'), MESSAGES.required);
  const name = readString(ctx, obj, 'name', path, OBJECT_NAME, true);
  const schema = readString(ctx, obj, 'schema', path, NAME, true);
  if (type === undefined || type === null || ctx.errors.length > before) return undefined;
  const namePath = keyPath(path, 'name');
  switch (type) {
    case 'database':
      if (name == null) report(ctx, namePath, MESSAGES.databaseNameRequired);
      else if (name === '*') report(ctx, namePath, MESSAGES.wildcardNotAllowed(type));
      else checkObjectNameBytes(ctx, type, name, namePath);
      if (schema != null) report(ctx, keyPath(path, 'schema'), MESSAGES.schemaForbiddenOnDatabase);
      break;
    case 'schema':
      if (name == null && schema == null) report(ctx, path, MESSAGES.schemaTargetRequired);
      else if (name != null && schema != null && name !== schema)
        report(ctx, path, MESSAGES.schemaTargetDisagree);
      else if (name === '*') report(ctx, namePath, MESSAGES.wildcardNotAllowed(type));
      else if (name != null) checkObjectNameBytes(ctx, type, name, namePath);
      break;
    case 'function':
    case 'materialized_view':
    case 'sequence':
    case 'table':
    case 'type':
    case 'view':
      if (schema == null) report(ctx, keyPath(path, 'schema'), MESSAGES.schemaRequired(type));
      if (name == null) report(ctx, namePath, MESSAGES.nameRequired(type));
      else checkObjectNameBytes(ctx, type, name, namePath);
      break;
    default: {
      const unreachable: never = type;
      return unreachable;
    }
  }
  if (ctx.errors.length > before) return undefined;
  return { type, ...(name != null ? { name } : {}), ...(schema != null ? { schema } : {}) };
}

function objectTypeOf(value: unknown): ObjectType | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const type = (value as { type?: unknown }).type;
  return (OBJECT_TYPES as readonly unknown[]).includes(type) ? (type as ObjectType) : undefined;
}

/** Reads one top-level `grants[]` entry. */
export function readGrant(ctx: ReadContext, value: unknown, path: string): GrantSpec | undefined {
  const obj = readObject(ctx, value, path, ['ensure', 'object', 'privileges', 'role']);
  if (obj === undefined) return undefined;
  const before = ctx.errors.length;
  const ensure = readEnum(ctx, obj, 'ensure', path, ENSURES, false);
  const role = readRoleField(ctx, obj, 'role', path, { required: true });
  const rawObject = readField(obj, 'object', false);
  if (rawObject === undefined) report(ctx, keyPath(path, 'object'), MESSAGES.required);
  const object =
    rawObject === undefined ? undefined : readGrantObject(ctx, rawObject, keyPath(path, 'object'));
  const privileges = readPrivileges(ctx, obj, path, objectTypeOf(rawObject));
  if (ctx.errors.length > before || object === undefined || privileges === undefined || role == null)
    return undefined;
  return located(ctx, { ...(ensure != null ? { ensure } : {}), object, privileges, role }, path);
}

/** Reads one profile `grants[]` template: no `ensure: absent`, schema grants target the bound schema. */
export function readProfileGrant(
  ctx: ReadContext,
  value: unknown,
  path: string,
): ProfileGrantSpec | undefined {
  const obj = readObject(ctx, value, path, ['ensure', 'object', 'privileges']);
  if (obj === undefined) return undefined;
  const before = ctx.errors.length;
  const ensure = readEnum(ctx, obj, 'ensure', path, ENSURES, false);
  if (ensure === 'absent') report(ctx, keyPath(path, 'ensure'), MESSAGES.profileAbsent);
  const objectPath = keyPath(path, 'object');
  const rawObject = readField(obj, 'object', false);
  let object: ProfileGrantSpec['object'] | undefined;
  if (rawObject === undefined) report(ctx, objectPath, MESSAGES.required);
  else {
    const o = readObject(ctx, rawObject, objectPath, ['name', 'type']);
    if (o !== undefined) {
      const type = readEnum(ctx, o, 'type', objectPath, OBJECT_TYPES, false);
      if (o['type'] === undefined || o['type'] === null)
        report(ctx, keyPath(objectPath, 'type'), MESSAGES.required);
      const name = readString(ctx, o, 'name', objectPath, OBJECT_NAME, true);
      const namePath = keyPath(objectPath, 'name');
      if (type === 'schema' && name != null) report(ctx, namePath, MESSAGES.profileSchemaGrantName);
      if (type === 'database' && name == null) report(ctx, namePath, MESSAGES.databaseNameRequired);
      if (type === 'database' && name === '*') report(ctx, namePath, MESSAGES.wildcardNotAllowed(type));
      if (type != null && name != null) checkObjectNameBytes(ctx, type, name, namePath);
      if (type != null) object = { type, ...(name != null ? { name } : {}) };
    }
  }
  const privileges = readPrivileges(ctx, obj, path, objectTypeOf(rawObject));
  if (ctx.errors.length > before || object === undefined || privileges === undefined) return undefined;
  return located(ctx, { ...(ensure != null ? { ensure } : {}), object, privileges }, path);
}

/** Checks the on_type matrix: never database/view/materialized_view; schema only in global scope. */
function checkOnType(ctx: ReadContext, onType: ObjectType, global: boolean, at: string): void {
  if (DEFAULT_PRIVILEGE_NEVER.includes(onType)) report(ctx, at, MESSAGES.onTypeNever(onType));
  else if (onType === 'schema' && !global) report(ctx, at, MESSAGES.onTypeSchemaGlobalOnly);
}

/** Reads one top-level `default_privileges[]` entry; `defaultOwner` is the policy's fallback owner. */
export function readDefaultPrivilege(
  ctx: ReadContext,
  value: unknown,
  path: string,
  defaultOwner: string | null | undefined,
): DefaultPrivilegeSpec | undefined {
  const obj = readObject(ctx, value, path, ['grant', 'owner', 'schema', 'scope']);
  if (obj === undefined) return undefined;
  const before = ctx.errors.length;
  const owner = readRoleField(ctx, obj, 'owner', path, {
    required: false,
    publicAs: 'a default privilege owner',
  });
  const schema = readString(ctx, obj, 'schema', path, NAME, true);
  const scope = readScope(ctx, obj, path);
  const hasSchema = schema != null || (obj['schema'] !== undefined && obj['schema'] !== null);
  const hasScope = obj['scope'] !== undefined && obj['scope'] !== null;
  if (hasSchema === hasScope) report(ctx, path, MESSAGES.scopeOrSchema);
  const resolvedOwner = owner ?? defaultOwner ?? null;
  if (owner == null && defaultOwner == null)
    report(ctx, keyPath(path, 'owner'), MESSAGES.defaultOwnerMissing);
  const global = scope?.type === 'global';
  const grant = readArray(ctx, obj, 'grant', path, { max: 64, required: true }, (item, at) => {
    const entry = readDefaultGrantItem(ctx, item, at, global);
    if (entry === undefined) return undefined;
    if (entry.role == null) {
      report(ctx, keyPath(at, 'role'), MESSAGES.defaultGrantRoleRequired);
      return undefined;
    }
    if (resolvedOwner !== null && entry.role === resolvedOwner) {
      report(ctx, keyPath(at, 'role'), MESSAGES.defaultGranteeIsOwner(resolvedOwner));
      return undefined;
    }
    return entry;
  });
  if (ctx.errors.length > before || grant === undefined) return undefined;
  return located(
    ctx,
    {
      ...(owner != null ? { owner } : {}),
      ...(schema != null ? { schema } : {}),
      ...(scope != null ? { scope } : {}),
      grant,
    },
    path,
  );
}

function readScope(
  ctx: ReadContext,
  obj: Readonly<Record<string, unknown>>,
  path: string,
): DefaultPrivilegeScopeSpec | undefined {
  const raw = readField(obj, 'scope', true);
  if (raw == null) return undefined;
  const at = keyPath(path, 'scope');
  const scope = readObject(ctx, raw, at, ['schema', 'type']);
  if (scope === undefined) return undefined;
  const type = readEnum(ctx, scope, 'type', at, ['global', 'schema'] as const, false);
  if (scope['type'] === undefined || scope['type'] === null)
    report(ctx, keyPath(at, 'type'), MESSAGES.required);
  const schema = readString(ctx, scope, 'schema', at, NAME, true);
  if (type === 'schema' && schema == null) report(ctx, keyPath(at, 'schema'), MESSAGES.scopeSchemaRequired);
  if (type === 'global' && scope['schema'] != null)
    report(ctx, keyPath(at, 'schema'), MESSAGES.scopeSchemaForbidden);
  if (type == null) return undefined;
  return type === 'schema' ? { type, ...(schema != null ? { schema } : {}) } : { type };
}

function readDefaultGrantItem(
  ctx: ReadContext,
  value: unknown,
  path: string,
  global: boolean,
): DefaultPrivilegeGrantSpec | undefined {
  const obj = readObject(ctx, value, path, ['ensure', 'on_type', 'privileges', 'role']);
  if (obj === undefined) return undefined;
  const before = ctx.errors.length;
  const ensure = readEnum(ctx, obj, 'ensure', path, ENSURES, false);
  const onType = readEnum(ctx, obj, 'on_type', path, OBJECT_TYPES, false);
  if (obj['on_type'] === undefined || obj['on_type'] === null)
    report(ctx, keyPath(path, 'on_type'), MESSAGES.required);
  if (onType != null) checkOnType(ctx, onType, global, keyPath(path, 'on_type'));
  const privileges = readPrivileges(ctx, obj, path, onType ?? undefined);
  const role = readRoleField(ctx, obj, 'role', path, { required: false });
  if (ctx.errors.length > before || onType == null || privileges === undefined) return undefined;
  return located(
    ctx,
    { ...(ensure != null ? { ensure } : {}), on_type: onType, privileges, ...(role != null ? { role } : {}) },
    path,
  );
}

/** Reads one profile `default_privileges[]` item (always schema-scoped to the bound schema). */
export function readProfileDefaultPrivilege(
  ctx: ReadContext,
  value: unknown,
  path: string,
): ProfileDefaultPrivilegeSpec | undefined {
  return readDefaultGrantItem(ctx, value, path, false);
}
