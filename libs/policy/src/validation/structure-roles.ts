// Structural pass for roles, passwords and profiles: attribute types, config names and values, password
// source rules, ISO 8601 expiry, and the pg_* / PUBLIC reservations on declared role names.

import type { PasswordGenerateSpec, PasswordSpec, ProfileSpec, RoleSpec } from '../model/index.js';
import { located, NAME, type ReadContext, readConfig, readRoleField, SECRET } from './context.js';
import { keyPath, report } from './errors.js';
import { canonicalConfigValue, isValidConfigName } from './guc.js';
import { MESSAGES } from './messages.js';
import {
  readArray,
  readBoolean,
  readField,
  readInteger,
  readObject,
  readString,
  checkString,
  type JsonObject,
} from './reader.js';
import { readProfileDefaultPrivilege, readProfileGrant } from './structure-access.js';
import { normaliseValidUntil } from './timestamp.js';

const ROLE_FIELDS = [
  'bypassrls',
  'comment',
  'config',
  'connection_limit',
  'createdb',
  'createrole',
  'external',
  'inherit',
  'login',
  'name',
  'password',
  'password_valid_until',
  'preserve_undeclared_grants',
  'replication',
  'superuser',
] as const;

const FLAGS = [
  'login',
  'superuser',
  'createdb',
  'createrole',
  'inherit',
  'replication',
  'bypassrls',
] as const;

const INT32_MAX = 2_147_483_647;

/** Validates config names and list-GUC syntax; `placeholders` allows `{schema}`/`{profile}` in values. */
function configCheckers(ctx: ReadContext) {
  return {
    name: (name: string, at: string): void => {
      if (!isValidConfigName(name)) report(ctx, at, MESSAGES.configName);
    },
    value: (name: string, value: string, at: string): void => {
      if (canonicalConfigValue(name, value) === undefined)
        report(ctx, at, MESSAGES.configListSyntax(name.toLowerCase()));
    },
  };
}

function readConnectionLimit(ctx: ReadContext, obj: JsonObject, path: string): number | null | undefined {
  const raw = readField(obj, 'connection_limit', true);
  if (raw === null || raw === undefined) return raw;
  const at = keyPath(path, 'connection_limit');
  if (typeof raw !== 'number' || !Number.isInteger(raw)) report(ctx, at, MESSAGES.mustBeInteger);
  else if (raw > INT32_MAX || raw < -INT32_MAX - 1) report(ctx, at, MESSAGES.int32);
  else if (raw < -1) report(ctx, at, MESSAGES.connectionLimit);
  else return raw;
  return undefined;
}

function readPassword(ctx: ReadContext, raw: unknown, path: string): PasswordSpec | undefined {
  const obj = readObject(ctx, raw, path, ['generate', 'secretKey', 'secretRef']);
  if (obj === undefined) return undefined;
  const before = ctx.errors.length;
  let generate: PasswordGenerateSpec | undefined;
  const rawGenerate = readField(obj, 'generate', true);
  if (rawGenerate != null) {
    const at = keyPath(path, 'generate');
    const g = readObject(ctx, rawGenerate, at, ['length', 'secretKey', 'secretName']);
    if (g !== undefined) {
      const length = readInteger(ctx, g, 'length', at, { min: 16, max: 128 }, false);
      const secretKey = readString(ctx, g, 'secretKey', at, SECRET, false);
      const secretName = readString(ctx, g, 'secretName', at, SECRET, false);
      generate = {
        ...(length != null ? { length } : {}),
        ...(secretKey != null ? { secretKey } : {}),
        ...(secretName != null ? { secretName } : {}),
      };
    }
  }
  let secretRef: { readonly name: string } | undefined;
  const rawRef = readField(obj, 'secretRef', true);
  if (rawRef != null) {
    const at = keyPath(path, 'secretRef');
    const r = readObject(ctx, rawRef, at, ['name']);
    if (r !== undefined) {
      const name = readString(ctx, r, 'name', at, SECRET, false);
      if (r['name'] == null) report(ctx, keyPath(at, 'name'), MESSAGES.required);
      if (name != null) secretRef = { name };
    }
  }
  const secretKey = readString(ctx, obj, 'secretKey', path, SECRET, true);
  if (rawGenerate != null && rawRef != null) report(ctx, path, MESSAGES.passwordExclusive);
  if (rawGenerate == null && rawRef == null) report(ctx, path, MESSAGES.passwordSourceRequired);
  if (secretKey != null && rawRef == null)
    report(ctx, keyPath(path, 'secretKey'), MESSAGES.passwordSecretKeyOnlyWithRef);
  if (ctx.errors.length > before) return undefined;
  return {
    ...(generate !== undefined ? { generate } : {}),
    ...(secretRef !== undefined ? { secretRef } : {}),
    ...(secretKey != null ? { secretKey } : {}),
  };
}

/** Reads one `roles[]` entry. */
export function readRole(ctx: ReadContext, value: unknown, path: string): RoleSpec | undefined {
  const obj = readObject(ctx, value, path, ROLE_FIELDS);
  if (obj === undefined) return undefined;
  const before = ctx.errors.length;
  const name = readRoleField(ctx, obj, 'name', path, { required: true, publicAs: 'a role name' });
  const flags: Record<string, boolean | null> = {};
  for (const flag of FLAGS) {
    const v = readBoolean(ctx, obj, flag, path, true);
    if (v !== undefined) flags[flag] = v;
  }
  const connectionLimit = readConnectionLimit(ctx, obj, path);
  const comment = readString(ctx, obj, 'comment', path, { min: 0, max: 256 }, true);
  const checkers = configCheckers(ctx);
  const config = readConfig(ctx, obj, path, checkers.name, checkers.value);
  const external = readBoolean(ctx, obj, 'external', path, false);
  const preserve = readBoolean(ctx, obj, 'preserve_undeclared_grants', path, false);
  const rawPassword = readField(obj, 'password', true);
  const password =
    rawPassword == null ? rawPassword : readPassword(ctx, rawPassword, keyPath(path, 'password'));
  const validUntil = readString(ctx, obj, 'password_valid_until', path, { min: 0, max: 64 }, true);
  if (validUntil != null && normaliseValidUntil(validUntil) === undefined) {
    report(ctx, keyPath(path, 'password_valid_until'), MESSAGES.validUntil);
  }
  if (name != null && name.startsWith('pg_') && external !== true)
    report(ctx, keyPath(path, 'name'), MESSAGES.pgPrefixMustBeExternal);
  if (rawPassword != null && external === true)
    report(ctx, keyPath(path, 'password'), MESSAGES.externalPassword);
  else if (rawPassword != null && flags['login'] !== true)
    report(ctx, keyPath(path, 'password'), MESSAGES.passwordRequiresLogin);
  if (ctx.errors.length > before || name == null) return undefined;
  return located(
    ctx,
    {
      name,
      ...flags,
      ...(connectionLimit !== undefined ? { connection_limit: connectionLimit } : {}),
      ...(comment !== undefined ? { comment } : {}),
      ...(config !== undefined ? { config } : {}),
      ...(external != null ? { external } : {}),
      ...(password !== undefined ? { password } : {}),
      ...(validUntil !== undefined ? { password_valid_until: validUntil } : {}),
      ...(preserve != null ? { preserve_undeclared_grants: preserve } : {}),
    },
    path,
  );
}

/** Reads one `profiles.<name>` value; the key itself is checked by the caller. */
export function readProfile(ctx: ReadContext, value: unknown, path: string): ProfileSpec | undefined {
  const obj = readObject(ctx, value, path, ['config', 'default_privileges', 'grants', 'inherit', 'login']);
  if (obj === undefined) return undefined;
  const before = ctx.errors.length;
  const login = readBoolean(ctx, obj, 'login', path, true);
  const inherit = readBoolean(ctx, obj, 'inherit', path, true);
  const checkers = configCheckers(ctx);
  const config = readConfig(ctx, obj, path, checkers.name, () => undefined);
  const grants = readArray(ctx, obj, 'grants', path, { max: 64 }, (item, at) =>
    readProfileGrant(ctx, item, at),
  );
  const defaults = readArray(ctx, obj, 'default_privileges', path, { max: 32 }, (item, at) =>
    readProfileDefaultPrivilege(ctx, item, at),
  );
  if (ctx.errors.length > before) return undefined;
  return located(
    ctx,
    {
      ...(login !== undefined ? { login } : {}),
      ...(inherit !== undefined ? { inherit } : {}),
      ...(config !== undefined ? { config } : {}),
      ...(grants !== undefined ? { grants } : {}),
      ...(defaults !== undefined ? { default_privileges: defaults } : {}),
    },
    path,
  );
}

/** Reads the `profiles` map: at most 128 entries, names 1..63 characters and bytes. */
export function readProfiles(
  ctx: ReadContext,
  raw: unknown,
  path: string,
): Readonly<Record<string, ProfileSpec>> | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    report(ctx, path, MESSAGES.mustBeObject);
    return undefined;
  }
  const entries = Object.entries(raw as JsonObject);
  if (entries.length > 128) report(ctx, path, MESSAGES.tooManyEntries(128));
  const profiles: [string, ProfileSpec][] = [];
  for (const [name, value] of entries) {
    const at = keyPath(path, name);
    const nameOk = checkString(ctx, name, at, NAME);
    const profile = readProfile(ctx, value, at);
    if (nameOk && profile !== undefined) profiles.push([name, profile]);
  }
  // Object.fromEntries keeps a `__proto__` profile name an own property.
  return Object.fromEntries(profiles);
}
