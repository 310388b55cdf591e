// Everything a reconcile needs before the database: expansion, connection and password sources resolved
// against the namespace's cached Secrets, and the conflict claims of every other policy. Pure.
import {
  deriveManagedScope,
  expandPolicy,
  type DesiredState,
  type ManagedScope,
  type PolicyContent,
} from '@rolepolicy/policy';
import {
  passwordSecretRefs,
  resolveConnection,
  resolvePasswordSources,
  type Connection,
  type PasswordSecretRef,
  type ResolvedConnectionSpec,
  type SecretLookup,
} from '@rolepolicy/kube';
import {
  secretNamesOf,
  type ConditionReason,
  type PolicyClaims,
  type PostgresPolicy,
  type ReconcileError,
} from '@rolepolicy/plan-lifecycle';
import { databaseAddress } from './planning.js';

/** A policy ready to inspect. */
export interface Prepared {
  readonly ok: true;
  readonly desired: DesiredState;
  readonly scope: ManagedScope;
  readonly connection: ResolvedConnectionSpec;
  readonly target: string;
  readonly passwordSources: Readonly<Record<string, string>>;
  /** Generated password Secrets that do not exist yet. */
  readonly missingGenerated: readonly PasswordSecretRef[];
  /** Secret name -> resourceVersion of every Secret read (connection and passwords). */
  readonly secretVersions: Readonly<Record<string, string>>;
  readonly claims: PolicyClaims;
}

/** Why the policy cannot be inspected, plus the Secrets whose appearance should retry it. */
export interface NotPrepared {
  readonly ok: false;
  readonly error: ReconcileError;
  readonly watchedSecrets: readonly string[];
}

/** Expands a policy and resolves its connection and passwords (`lookup` reads its namespace). */
export function preparePolicy(policy: PostgresPolicy, lookup: SecretLookup): Prepared | NotPrepared {
  const expansion = expandPolicy(policy.spec as PolicyContent, { policyName: policy.metadata.name });
  const connectionSpec = policy.spec.connection as Connection;
  const connectionSecrets = secretNamesOf(connectionSpec);
  if (!expansion.ok) {
    const errors = expansion.errors.slice(0, 5).map((e) => `${e.path}: ${e.message}`);
    return {
      ok: false,
      error: {
        class: 'permanent',
        reason: 'InvalidSpec',
        message: `the policy is invalid: ${errors.join('; ')}`,
      },
      watchedSecrets: connectionSecrets,
    };
  }
  const desired = expansion.desired;
  const namespace = policy.metadata.namespace;
  const connection = resolveConnection(namespace, connectionSpec, lookup);
  const refs = passwordSecretRefs(policy.metadata.name, desired.roles);
  const watched = [...connectionSecrets, ...refs.map((r) => r.secretName)];
  if (!connection.ok) {
    return {
      ok: false,
      error: {
        class: 'permanent',
        reason: connectionReason(connection.reason),
        message: connection.message,
      },
      watchedSecrets: watched,
    };
  }
  const passwords = resolvePasswordSources(namespace, refs, lookup);
  const failure = passwords.failures[0];
  if (failure !== undefined) {
    const ref = refs.find((r) => r.role === failure.role);
    const empty = failure.reason === 'SecretValueEmpty' && ref !== undefined;
    return {
      ok: false,
      error: {
        class: 'permanent',
        reason: empty ? 'InvalidSpec' : SECRET_REASONS[failure.reason],
        message: empty
          ? `Secret "${namespace}/${ref.secretName}" key "${ref.secretKey}" for role "${ref.role}": password is empty`
          : failure.message,
      },
      watchedSecrets: watched,
    };
  }
  const scope = deriveManagedScope(desired);
  return {
    ok: true,
    desired,
    scope,
    connection: connection.connection,
    target: connection.target,
    passwordSources: passwords.sources,
    missingGenerated: passwords.missingGenerated,
    secretVersions: { ...connection.secretVersions, ...passwords.secretVersions },
    claims: claimsOf(policy, databaseAddress(connection.connection), scope, desired),
  };
}

/**
 * Ready reasons for a Secret that gave no value, in the peer operator's vocabulary: an absent Secret is
 * `SecretFetchFailed`, an absent key `SecretMissing`; an empty password is an `InvalidSpec` (above).
 */
const SECRET_REASONS = {
  SecretMissing: 'SecretFetchFailed',
  SecretKeyMissing: 'SecretMissing',
  SecretValueEmpty: 'InvalidSpec',
} as const satisfies Record<string, ConditionReason>;

function connectionReason(
  reason: Exclude<ReturnType<typeof resolveConnection>, { ok: true }>['reason'],
): ConditionReason {
  if (reason === 'InvalidConnection') return 'InvalidSpec';
  // An empty URL or connection part is a connection parameter nobody can connect with.
  if (reason === 'SecretValueEmpty') return 'InvalidConnectionParams';
  return SECRET_REASONS[reason];
}

function claimsOf(
  policy: PostgresPolicy,
  databaseKey: string,
  scope: ManagedScope,
  desired: { readonly roles: readonly { readonly name: string; readonly external: boolean }[] },
): PolicyClaims {
  return {
    externalRoles: desired.roles.filter((r) => r.external).map((r) => r.name),
    namespace: policy.metadata.namespace,
    name: policy.metadata.name,
    uid: policy.metadata.uid,
    creationTimestamp: policy.metadata.creationTimestamp,
    databaseKey,
    roles: scope.roles,
    schemas: scope.schemas,
  };
}

/**
 * Whether a pass should ask the inspector for the catalog fingerprint. It only pays when the diff comes out
 * empty (it is recorded for the next passes): not on a generation's first pass, which nearly always has work
 * (a new policy, an edited spec). Later passes ask again, so a converged policy still moves to
 * fingerprint-only passes one pass on. In a fresh database session the fingerprint costs about as much
 * PostgreSQL time as the inspection itself (docs/performance.md, "A fleet").
 */
export function fingerprintPays(policy: PostgresPolicy): boolean {
  return policy.status?.last_attempted_generation === policy.metadata.generation;
}

/**
 * Claims of a peer policy and the connection they were resolved with (to prove it reaches the database,
 * ADR 0024), or null when it is invalid or unresolvable (it claims nothing then).
 */
export function peerClaims(
  policy: PostgresPolicy,
  lookup: SecretLookup,
): { readonly claims: PolicyClaims; readonly connection: ResolvedConnectionSpec } | null {
  const expansion = expandPolicy(policy.spec as PolicyContent, { policyName: policy.metadata.name });
  if (!expansion.ok) return null;
  const connection = resolveConnection(
    policy.metadata.namespace,
    policy.spec.connection as Connection,
    lookup,
  );
  if (!connection.ok) return null;
  return {
    claims: claimsOf(
      policy,
      databaseAddress(connection.connection),
      deriveManagedScope(expansion.desired),
      expansion.desired,
    ),
    connection: connection.connection,
  };
}
