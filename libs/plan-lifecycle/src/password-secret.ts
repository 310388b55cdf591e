// The Secret that holds a generated password, as a template without data: the k8s-gateway draws the
// password where it writes the Secret (rp.k8s.secret.generate), so no copy of it ever travels or rests.

import { policyOwnerReference, labelValue } from './plan-builder.js';
import { VERIFIER_KEY } from '@rolepolicy/policy';
import { POLICY_LABEL, type ObjectMeta, type PostgresPolicy } from './resources.js';

/** Label naming the role whose password a generated Secret holds. */
export const ROLE_LABEL = 'rolepolicy.io/role';
export {
  PASSWORD_ALPHABET,
  PASSWORD_LENGTH,
  VERIFIER_KEY,
  passwordFromRandomBytes,
} from '@rolepolicy/policy';

/** `secretName:secretKey:resourceVersion` (the value bound into the change digest, never the password). */
export function passwordSourceVersion(
  secretName: string,
  secretKey: string,
  resourceVersion: string,
): string {
  return `${secretName}:${secretKey}:${resourceVersion}`;
}

/** A generated password Secret without its data (the gateway fills `data` when it creates it). */
export interface SecretTemplate {
  readonly apiVersion: 'v1';
  readonly kind: 'Secret';
  readonly type: 'Opaque';
  readonly metadata: ObjectMeta;
}

/** Inputs of {@link buildGeneratedSecretTemplate}. */
export interface GeneratedSecretInput {
  readonly policy: PostgresPolicy;
  readonly role: string;
  /** `password.generate.secretName`, defaulting to `{policy}-gen-{role}` (resolved by the engine). */
  readonly secretName: string;
  /** `password.generate.secretKey`, default `password`. */
  readonly secretKey: string;
  readonly now: string;
}

/**
 * The Secret that will hold a generated password, controlled by the policy (deleted with it). The gateway
 * creates it with create-only semantics: on 409 the existing password is kept.
 */
export function buildGeneratedSecretTemplate(input: GeneratedSecretInput): SecretTemplate {
  if (input.secretKey === VERIFIER_KEY) throw new Error(`secretKey "${VERIFIER_KEY}" is reserved`);
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
  };
}
