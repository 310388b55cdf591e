// Password sources for the CLI: secretRef passwords come from environment variables
// ROLEPOLICY_PASSWORD_<SECRETNAME>_<SECRETKEY>; `generate` makes a random one when the role is created.

import { randomBytes, randomInt } from 'node:crypto';

import {
  SCRAM_SALT_LENGTH,
  scramSha256Verifier,
  type Change,
  type DesiredRole,
  type DesiredState,
} from '@rolepolicy/policy';

import { CliError } from './io.js';

/** The environment variable holding a secretRef password: upper-cased, non-alphanumerics as `_`. */
export function passwordEnvName(secretName: string, secretKey: string): string {
  return `ROLEPOLICY_PASSWORD_${secretName}_${secretKey}`.toUpperCase().replace(/[^A-Z0-9]/g, '_');
}

/**
 * Source versions for the planner. The CLI keeps no status between runs, so a password counts as applied
 * unless the role is created in this plan or `--rotate-passwords` is given (then every source is "new").
 */
export function cliPasswordSources(
  desired: DesiredState,
  rotate: boolean,
): { sources: Record<string, string>; applied: Record<string, string> } {
  const sources: Record<string, string> = {};
  const applied: Record<string, string> = {};
  for (const role of desired.roles) {
    if (role.password === null || role.external) continue;
    const version = `${role.password.secretName}:${role.password.secretKey}:${role.password.kind === 'generate' ? 'generated' : 'env'}`;
    sources[role.name] = version;
    if (!rotate) applied[role.name] = version;
  }
  return { sources, applied };
}

const ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';

/** A random password of `length` characters (crypto RNG, unbiased). */
export function generatePassword(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[randomInt(ALPHABET.length)];
  return out;
}

/** Cleartext passwords for every set_password change, and which of them were generated. */
export interface ResolvedPasswords {
  readonly cleartext: Readonly<Record<string, string>>;
  readonly generated: readonly { readonly role: string; readonly password: string }[];
}

/** Resolves the password of every set_password change: environment for secretRef, random for generate. */
export function resolvePasswords(
  changes: readonly Change[],
  roles: readonly DesiredRole[],
  env: Readonly<Record<string, string | undefined>>,
): ResolvedPasswords {
  const cleartext: Record<string, string> = {};
  const generated: { role: string; password: string }[] = [];
  for (const change of changes) {
    if (change.kind !== 'set_password') continue;
    const role = roles.find((candidate) => candidate.name === change.name);
    const source = role?.password;
    if (!source) throw new CliError(`role ${JSON.stringify(change.name)} has no password source`);
    if (source.kind === 'generate') {
      const password = generatePassword(source.length);
      cleartext[change.name] = password;
      generated.push({ role: change.name, password });
      continue;
    }
    const variable = passwordEnvName(source.secretName, source.secretKey);
    const value = env[variable];
    if (value === undefined || value === '') {
      throw new CliError(
        `role ${JSON.stringify(change.name)} needs its password in the environment variable ${variable}`,
      );
    }
    cleartext[change.name] = value;
  }
  return { cleartext, generated };
}

/** SCRAM-SHA-256 verifiers (fresh random salt each) for the given cleartext passwords. */
export function verifiersOf(cleartext: Readonly<Record<string, string>>): Record<string, string> {
  const verifiers: Record<string, string> = {};
  for (const [role, password] of Object.entries(cleartext)) {
    verifiers[role] = scramSha256Verifier(password, randomBytes(SCRAM_SALT_LENGTH));
  }
  return verifiers;
}

/** Placeholder verifiers for a preview: the SQL shown is redacted, so no real password is needed. */
export function previewVerifiers(changes: readonly Change[]): Record<string, string> {
  const verifiers: Record<string, string> = {};
  for (const change of changes) {
    if (change.kind === 'set_password') {
      verifiers[change.name] = scramSha256Verifier(
        randomBytes(24).toString('hex'),
        randomBytes(SCRAM_SALT_LENGTH),
        1,
      );
    }
  }
  return verifiers;
}
