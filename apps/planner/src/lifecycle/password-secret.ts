// Generated passwords as data: the random password (from bytes the caller draws) and the Secret that
// holds it, owned by the policy. Created once, right before the SQL that sets it; never logged.

import { policyOwnerReference, labelValue } from './plan-builder.js';
import { POLICY_LABEL, type ObjectMeta, type PostgresPolicy } from './resources.js';

/** 64 symbols: each random byte's low 6 bits pick one without bias, and the result needs no quoting. */
export const PASSWORD_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** Spec bounds of `password.generate.length`. */
export const PASSWORD_LENGTH = { min: 16, max: 128, default: 32 } as const;
/** Label naming the role whose password a generated Secret holds. */
export const ROLE_LABEL = 'rolepolicy.io/role';
/** Key of the SCRAM verifier stored beside the password, so a second replica can rebuild the same SQL. */
export const VERIFIER_KEY = 'verifier';

/**
 * A password of `length` characters (6 bits each) from random bytes; pass at least `length` bytes
 * (e.g. `crypto.randomBytes(length)`).
 */
export function passwordFromRandomBytes(bytes: Uint8Array, length: number = PASSWORD_LENGTH.default): string {
  if (!Number.isInteger(length) || length < PASSWORD_LENGTH.min || length > PASSWORD_LENGTH.max) {
    throw new Error(`generated password length must be ${PASSWORD_LENGTH.min}..${PASSWORD_LENGTH.max}`);
  }
  if (bytes.length < length) throw new Error(`need ${length} random bytes, got ${bytes.length}`);
  let out = '';
  for (let i = 0; i < length; i += 1) out += PASSWORD_ALPHABET[(bytes[i] ?? 0) & 63];
  return out;
}

/** `secretName:secretKey:resourceVersion` (the value bound into the change digest, never the password). */
export function passwordSourceVersion(
  secretName: string,
  secretKey: string,
  resourceVersion: string,
): string {
  return `${secretName}:${secretKey}:${resourceVersion}`;
}

/** A Secret as data (the gateway creates it). `data` values are base64, as the API expects. */
export interface Secret {
  readonly apiVersion: 'v1';
  readonly kind: 'Secret';
  readonly type: 'Opaque';
  readonly metadata: ObjectMeta;
  readonly data: Readonly<Record<string, string>>;
}

/** Inputs of {@link buildGeneratedPasswordSecret}. */
export interface GeneratedSecretInput {
  readonly policy: PostgresPolicy;
  readonly role: string;
  /** `password.generate.secretName`, defaulting to `{policy}-gen-{role}` (resolved by the engine). */
  readonly secretName: string;
  /** `password.generate.secretKey`, default `password`. */
  readonly secretKey: string;
  readonly password: string;
  /** SCRAM-SHA-256 verifier of `password` (libs/policy `scramSha256Verifier`). */
  readonly verifier: string;
  readonly now: string;
}

/**
 * The Secret holding a generated password, controlled by the policy (deleted with it). Create it with
 * create-only semantics: on 409 another replica won, and its password must be used instead.
 */
export function buildGeneratedPasswordSecret(input: GeneratedSecretInput): Secret {
  if (input.secretKey === VERIFIER_KEY) throw new Error(`secretKey "${VERIFIER_KEY}" is reserved`);
  const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'Opaque',
    metadata: {
      name: input.secretName,
      namespace: input.policy.metadata.namespace,
      labels: {
        'app.kubernetes.io/managed-by': 'rolepolicy',
        [POLICY_LABEL]: labelValue(input.policy.metadata.name),
        [ROLE_LABEL]: labelValue(input.role.toLowerCase().replace(/[^a-z0-9._-]+/g, '-')),
      },
      annotations: { 'rolepolicy.io/generated-at': input.now },
      ownerReferences: [policyOwnerReference(input.policy)],
    },
    data: { [input.secretKey]: b64(input.password), [VERIFIER_KEY]: b64(input.verifier) },
  };
}
