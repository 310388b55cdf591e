// Resolves declared and generated roles into RoleState: PostgreSQL defaults for omitted attributes, expiry
// normalised to UTC whole seconds, config keys lowercased and list GUCs stored as PostgreSQL stores them.

import type { PasswordSource, PasswordSpec, ProfileSpec, RoleSpec, RoleState } from '../model/index.js';
import { canonicalConfigValue } from '../validation/guc.js';
import { normaliseValidUntil } from '../validation/timestamp.js';

/** Lowercases config keys and canonicalises list GUC values (invalid lists keep their text; validation reports them). */
export function canonicalConfig(
  config: Readonly<Record<string, string>> | undefined,
): Readonly<Record<string, string>> {
  // Object.fromEntries keeps a `__proto__` key an own property instead of replacing the prototype.
  return Object.fromEntries(
    Object.entries(config ?? {}).map(([key, value]) => {
      const name = key.toLowerCase();
      return [name, canonicalConfigValue(name, value) ?? value];
    }),
  );
}

/** The state PostgreSQL gives a role created with no options. */
export const DEFAULT_ROLE_STATE: RoleState = {
  login: false,
  superuser: false,
  createdb: false,
  createrole: false,
  inherit: true,
  replication: false,
  bypassrls: false,
  connection_limit: -1,
  comment: null,
  password_valid_until: null,
  config: {},
};

/** State of a one-off role: an omitted attribute means PostgreSQL's default, and it is enforced. */
export function declaredRoleState(role: RoleSpec): RoleState {
  const validUntil =
    role.password_valid_until == null ? null : (normaliseValidUntil(role.password_valid_until) ?? null);
  return {
    login: role.login ?? DEFAULT_ROLE_STATE.login,
    superuser: role.superuser ?? DEFAULT_ROLE_STATE.superuser,
    createdb: role.createdb ?? DEFAULT_ROLE_STATE.createdb,
    createrole: role.createrole ?? DEFAULT_ROLE_STATE.createrole,
    inherit: role.inherit ?? DEFAULT_ROLE_STATE.inherit,
    replication: role.replication ?? DEFAULT_ROLE_STATE.replication,
    bypassrls: role.bypassrls ?? DEFAULT_ROLE_STATE.bypassrls,
    connection_limit: role.connection_limit ?? DEFAULT_ROLE_STATE.connection_limit,
    comment: role.comment ?? null,
    password_valid_until: validUntil,
    config: canonicalConfig(role.config),
  };
}

/** Substitutes `{schema}` and `{profile}` in one pass, so a schema name containing `{profile}` stays literal. */
export function substitutePlaceholders(template: string, schema: string, profile: string): string {
  return template.replace(/\{(schema|profile)\}/g, (_match, key: string) =>
    key === 'schema' ? schema : profile,
  );
}

/** The fixed comment on profile-generated roles. */
export function generatedComment(profile: string, schema: string): string {
  return `Generated from profile '${profile}' for schema '${schema}'`;
}

/** State of a profile-generated role: profile login/inherit, fixed comment, config with placeholders substituted. */
export function generatedRoleState(profileName: string, profile: ProfileSpec, schema: string): RoleState {
  const config = Object.fromEntries(
    Object.entries(profile.config ?? {}).map(([key, value]) => [
      key,
      substitutePlaceholders(value, schema, profileName),
    ]),
  );
  return {
    ...DEFAULT_ROLE_STATE,
    login: profile.login ?? DEFAULT_ROLE_STATE.login,
    inherit: profile.inherit ?? DEFAULT_ROLE_STATE.inherit,
    comment: generatedComment(profileName, schema),
    config: canonicalConfig(config),
  };
}

/**
 * Resolves a password block into its source. Generated: Secret `{policy}-gen-{role}`, key `password`,
 * length 32 unless set. Referenced: key defaults to the role name.
 */
export function passwordSource(
  password: PasswordSpec | null | undefined,
  role: string,
  policyName: string,
): PasswordSource | null {
  if (password == null) return null;
  if (password.secretRef != null) {
    return { kind: 'secret_ref', secretName: password.secretRef.name, secretKey: password.secretKey ?? role };
  }
  if (password.generate != null) {
    return {
      kind: 'generate',
      secretName: password.generate.secretName ?? `${policyName}-gen-${role}`,
      secretKey: password.generate.secretKey ?? 'password',
      length: password.generate.length ?? 32,
    };
  }
  return null;
}
