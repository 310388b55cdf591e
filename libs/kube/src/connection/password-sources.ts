// Password sources of a policy's roles as Secret references: the DNS-safe default name of a generated
// password Secret, the source version bound into the digest, and reading the cleartext for one version.
import { createHash } from 'node:crypto';

import { readSecretKey, resourceVersionOf, type SecretLookup } from './secret-data.js';

/** Key of a generated password in its Secret unless `generate.secretKey` is set. */
export const GENERATED_PASSWORD_KEY = 'password';
/**
 * The CRD's literal default of `password.generate.secretName`: an admitted object carries this text, which
 * means "the default name", never a Secret called that.
 */
export const GENERATED_NAME_TEMPLATE = '{policy}-gen-{role}';
/**
 * Version of a generated password whose Secret does not exist yet (the engine's sentinel): the digest binds
 * `secret:key:missing`, the plan always sets the password, and the executor creates the Secret under its
 * lock, only when an approved plan runs (ADR 0006).
 */
export const MISSING_VERSION = 'missing';

/** True for a source version whose generated Secret is still to be created by the executor. */
export function isMissingGenerated(sourceVersion: string): boolean {
  return sourceVersion.endsWith(`:${MISSING_VERSION}`);
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/** A role's password source as the engine expands it (`DesiredRole.password`, structurally). */
export type PasswordSourceSpec =
  | { readonly kind: 'secret_ref'; readonly secretName: string; readonly secretKey: string }
  | {
      readonly kind: 'generate';
      readonly secretName: string;
      readonly secretKey: string;
      readonly length: number;
    };

/** The part of an expanded role these functions read (`DesiredRole` from `@rolepolicy/policy` fits). */
export interface PasswordRole {
  readonly name: string;
  readonly external?: boolean;
  readonly password: PasswordSourceSpec | null;
}

/** Where one role's password lives. */
export interface PasswordSecretRef {
  readonly role: string;
  readonly kind: 'secret_ref' | 'generate';
  readonly secretName: string;
  readonly secretKey: string;
  /** Generated password length (generate only). */
  readonly length: number | null;
}

/**
 * The default Secret name of a generated password, `{policy}-gen-{role}`, made a valid DNS-1123 name:
 * lowercased, `_` and other characters outside `[a-z0-9.-]` replaced by `-`, edges trimmed to
 * alphanumerics; when that changed anything, `-` and the first 8 hex of SHA-256 of the raw name are
 * appended so `App_User` and `app-user` never share a Secret. At most 253 characters.
 */
export function generatedSecretName(policyName: string, role: string): string {
  const raw = `${policyName}-gen-${role}`;
  if (DNS_SUBDOMAIN.test(raw) && raw.length <= 253) return raw;
  const suffix = createHash('sha256').update(raw, 'utf8').digest('hex').slice(0, 8);
  const cleaned = raw
    .toLowerCase()
    .replace(/[^a-z0-9.-]/g, '-')
    .slice(0, 253 - suffix.length - 1)
    .replace(/^[^a-z0-9]+/, '')
    .replace(/[^a-z0-9]+$/, '');
  return cleaned === '' ? `gen-${suffix}` : `${cleaned}-${suffix}`;
}

/**
 * Password Secret references of the password-managed roles (external roles skipped), sorted by role.
 * A generated source carrying the engine's raw default name or the CRD's literal default
 * {@link GENERATED_NAME_TEMPLATE} gets {@link generatedSecretName};
 * an explicit `generate.secretName` is kept as written.
 */
export function passwordSecretRefs(
  policyName: string,
  roles: readonly PasswordRole[],
): readonly PasswordSecretRef[] {
  const refs: PasswordSecretRef[] = [];
  for (const role of roles) {
    const source = role.password;
    if (source === null || role.external === true) continue;
    if (source.kind === 'secret_ref') {
      refs.push({
        role: role.name,
        kind: 'secret_ref',
        secretName: source.secretName,
        secretKey: source.secretKey,
        length: null,
      });
    } else {
      const isDefault =
        source.secretName === `${policyName}-gen-${role.name}` ||
        source.secretName === GENERATED_NAME_TEMPLATE;
      refs.push({
        role: role.name,
        kind: 'generate',
        secretName: isDefault ? generatedSecretName(policyName, role.name) : source.secretName,
        secretKey: source.secretKey,
        length: source.length,
      });
    }
  }
  return refs.sort((a, b) => (a.role < b.role ? -1 : a.role > b.role ? 1 : 0));
}

/** `secretName:secretKey:resourceVersion`, the value the change digest binds (never the password). */
export function passwordSourceVersion(
  secretName: string,
  secretKey: string,
  resourceVersion: string,
): string {
  return `${secretName}:${secretKey}:${resourceVersion}`;
}

/** Current source versions of the roles' passwords, or what is missing. */
export interface PasswordSourceResolution {
  /** Role -> source version, for every role whose Secret and key exist, or whose generated Secret is due. */
  readonly sources: Readonly<Record<string, string>>;
  /** Secret name -> resourceVersion of every password Secret read. */
  readonly secretVersions: Readonly<Record<string, string>>;
  /**
   * Generated passwords whose Secret does not exist yet; their source is `secret:key:missing` in `sources`
   * (the executor creates the Secret when an approved plan runs).
   */
  readonly missingGenerated: readonly PasswordSecretRef[];
  /** Referenced Secrets or keys that are absent, and generated Secrets lacking their key (permanent). */
  readonly failures: readonly {
    readonly role: string;
    readonly reason: 'SecretMissing' | 'SecretKeyMissing' | 'SecretValueEmpty';
    readonly message: string;
  }[];
}

/** Resolves the source version of every reference against the namespace's Secrets. */
export function resolvePasswordSources(
  namespace: string,
  refs: readonly PasswordSecretRef[],
  lookupSecret: SecretLookup,
): PasswordSourceResolution {
  const sources: Record<string, string> = {};
  const secretVersions: Record<string, string> = {};
  const missingGenerated: PasswordSecretRef[] = [];
  const failures: {
    role: string;
    reason: 'SecretMissing' | 'SecretKeyMissing' | 'SecretValueEmpty';
    message: string;
  }[] = [];
  for (const ref of refs) {
    const read = readSecretKey(namespace, ref.secretName, ref.secretKey, lookupSecret);
    if (read.ok) {
      sources[ref.role] = passwordSourceVersion(ref.secretName, ref.secretKey, read.resourceVersion);
      secretVersions[ref.secretName] = read.resourceVersion;
    } else if (ref.kind === 'generate' && read.reason === 'SecretMissing') {
      missingGenerated.push(ref);
      sources[ref.role] = passwordSourceVersion(ref.secretName, ref.secretKey, MISSING_VERSION);
    } else {
      failures.push({
        role: ref.role,
        reason: read.reason,
        message: `password of role ${ref.role}: ${read.message}`,
      });
    }
  }
  return { sources, secretVersions, missingGenerated, failures };
}

/** The cleartext for one source version, or why it cannot be read (never the value in a message). */
export type PasswordRead =
  | { readonly ok: true; readonly password: string }
  | {
      readonly ok: false;
      readonly reason:
        | 'SecretMissing'
        | 'SecretKeyMissing'
        | 'SecretValueEmpty'
        | 'SecretVersionChanged'
        | 'InvalidSourceVersion';
      readonly message: string;
    };

/**
 * Reads the password a source version names, refusing when the Secret's resourceVersion is not the one
 * recorded (the digest bound that version; a newer password needs a new plan).
 */
export function readPasswordForSource(
  namespace: string,
  sourceVersion: string,
  lookupSecret: SecretLookup,
): PasswordRead {
  const parts = sourceVersion.split(':');
  if (parts.length !== 3 || parts.some((p) => p === '') || parts[2] === MISSING_VERSION) {
    return {
      ok: false,
      reason: 'InvalidSourceVersion',
      message: `password source version ${sourceVersion} names no Secret version`,
    };
  }
  const [name = '', key = '', version = ''] = parts;
  const secret = lookupSecret(name);
  if (secret !== undefined && resourceVersionOf(secret) !== version) {
    return {
      ok: false,
      reason: 'SecretVersionChanged',
      message: `Secret ${namespace}/${name} changed since the plan (resourceVersion ${resourceVersionOf(secret)}, planned ${version})`,
    };
  }
  const read = readSecretKey(namespace, name, key, lookupSecret);
  return read.ok ? { ok: true, password: read.value } : read;
}
