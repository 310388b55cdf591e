// Shared pieces of the structural pass: the read context (errors + entry locations) and the readers for
// role names and privilege lists that every block uses.

import { PRIVILEGES, PUBLIC_GRANTEE, type ObjectType, type Privilege } from '../model/index.js';
import { type ErrorSink, keyPath, report } from './errors.js';
import { MESSAGES } from './messages.js';
import { PRIVILEGES_BY_TYPE } from './privileges.js';
import {
  checkString,
  type JsonObject,
  type Locations,
  readArray,
  readEnumValue,
  readRequiredString,
  readString,
  type StringBounds,
} from './reader.js';

/** Errors plus where each typed entry came from. */
export interface ReadContext extends ErrorSink {
  readonly locations: Locations;
}

/** Role, schema and profile names: 1..63 characters and at most 63 UTF-8 bytes. */
export const NAME: StringBounds = { min: 1, max: 63, maxBytes: 63 };

/** Secret names and keys: 1..253 characters. */
export const SECRET: StringBounds = { min: 1, max: 253 };

/** role_pattern: 1..128 characters. */
export const PATTERN: StringBounds = { min: 1, max: 128 };

/** Records where an entry came from and returns it. */
export function located<T extends object>(ctx: ReadContext, entry: T, path: string): T {
  ctx.locations.set(entry, path);
  return entry;
}

/**
 * Reads a role-name field. `publicAs` names the position when PUBLIC is reserved there
 * (e.g. "a role name"); omit it where PUBLIC is a legal grantee.
 */
export function readRoleField(
  ctx: ReadContext,
  obj: JsonObject,
  key: string,
  path: string,
  options: { readonly required: boolean; readonly nullable?: boolean; readonly publicAs?: string },
): string | null | undefined {
  const value = options.required
    ? readRequiredString(ctx, obj, key, path, NAME)
    : readString(ctx, obj, key, path, NAME, options.nullable ?? true);
  if (value === PUBLIC_GRANTEE && options.publicAs !== undefined) {
    report(ctx, keyPath(path, key), MESSAGES.publicReserved(options.publicAs));
    return undefined;
  }
  if (value != null && RESERVED_ROLE_NAMES.includes(value)) {
    report(ctx, keyPath(path, key), MESSAGES.reservedRoleName(value));
    return undefined;
  }
  return value;
}

/**
 * Role names PostgreSQL's grammar never treats as a role, even double-quoted: `public` becomes the PUBLIC
 * pseudo-role (a grant would silently go to everyone) and `none` is refused (`role name "none" is reserved`).
 */
export const RESERVED_ROLE_NAMES: readonly string[] = ['none', 'public'];

/** Reads `privileges`: 1..16 items from the enum, each valid for `type` when the type is known. */
export function readPrivileges(
  ctx: ReadContext,
  obj: JsonObject,
  path: string,
  type: ObjectType | undefined,
): readonly Privilege[] | undefined {
  const before = ctx.errors.length;
  const list = readArray(ctx, obj, 'privileges', path, { min: 1, max: 16, required: true }, (value, at) => {
    const privilege = readEnumValue(ctx, value, at, PRIVILEGES);
    if (privilege !== undefined && type !== undefined && !PRIVILEGES_BY_TYPE[type].includes(privilege)) {
      report(ctx, at, MESSAGES.privilegeForType(privilege, type));
      return undefined;
    }
    return privilege;
  });
  return ctx.errors.length === before ? list : undefined;
}

/** Reads a string-to-string config map (max 32 entries, values max 256 characters, names validated). */
export function readConfig(
  ctx: ReadContext,
  obj: JsonObject,
  path: string,
  checkName: (name: string, at: string) => void,
  checkValue: (name: string, value: string, at: string) => void,
): Readonly<Record<string, string>> | undefined {
  const value = obj['config'];
  if (value === undefined || value === null) return undefined;
  const at = keyPath(path, 'config');
  if (typeof value !== 'object' || Array.isArray(value)) {
    report(ctx, at, MESSAGES.mustBeObject);
    return undefined;
  }
  const entries = Object.entries(value as JsonObject);
  if (entries.length > 32) report(ctx, at, MESSAGES.tooManyEntries(32));
  // Pairs + Object.fromEntries: a `__proto__` key stays an own property instead of replacing the prototype.
  const config: [string, string][] = [];
  const seen = new Set<string>();
  for (const [name, raw] of entries) {
    const entryPath = keyPath(at, name);
    checkName(name, entryPath);
    const lower = name.toLowerCase();
    if (seen.has(lower)) report(ctx, entryPath, MESSAGES.configDuplicateKey(lower));
    seen.add(lower);
    if (typeof raw !== 'string') {
      report(ctx, entryPath, MESSAGES.configValueType);
      continue;
    }
    checkString(ctx, raw, entryPath, { min: 0, max: 256 });
    checkValue(name, raw, entryPath);
    config.push([name, raw]);
  }
  return Object.fromEntries(config);
}
