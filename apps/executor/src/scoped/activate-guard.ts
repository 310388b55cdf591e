// The Activate's checks against the EphemeralAccessPolicy its request names and the live privilege graph
// of the bundle roles (ADR 0021), run under the database lock before any statement: a snapshot or plan that
// was written by hand, tampered with or outlived its policy grants nothing, and privileged roles need an opt-in.
import { PrivilegeRepository, type CatalogConnection } from '@rolepolicy/catalog';
import type { ScopedExecuteRequestV1 } from '@rolepolicy/contracts';
import {
  checkAccessTerms,
  privilegedRefusal,
  privilegedRoles,
  type BundleMembership,
  type PrivilegedNamespaces,
  type TermsAccessPolicy,
  type TermsRequest,
} from '@rolepolicy/policy';
import type { ScopedStop } from './scoped-verify.js';

/** The request fields the guard reads (its `resolvedAccess` has already verified). */
export interface GuardedRequest {
  readonly metadata: { readonly name: string; readonly namespace?: string };
  readonly spec?: {
    readonly accessPolicyRef?: { readonly name?: string };
    readonly subject?: { readonly role?: string };
  };
  readonly status?: {
    readonly resolvedAccess?: {
      readonly accessPolicyUid: string;
      readonly accessPolicyGeneration: number;
      readonly grantedDuration: string;
      readonly memberships: readonly BundleMembership[];
    } | null;
  } | null;
}

/** An access policy as the cache holds it, with the opt-in this check reads. */
export type GuardedAccessPolicy = TermsAccessPolicy & {
  readonly spec: TermsAccessPolicy['spec'] & { readonly allowPrivilegedRoles?: boolean | null };
};

/** What {@link guardActivate} reads. */
export interface ActivateGuardInput {
  readonly message: ScopedExecuteRequestV1;
  readonly request: GuardedRequest;
  /** The access policy named by the request, read from the synced cache in the plan's namespace. */
  readonly accessPolicy: GuardedAccessPolicy | undefined;
  readonly operator: PrivilegedNamespaces;
  /** The locked session: the privilege graph is read in the transaction that will grant. */
  readonly connection: CatalogConnection;
}

const failed = (reason: string, message: string): ScopedStop => ({
  outcome: 'Failed',
  reason,
  message: `${message}; nothing was run`,
});

/** Null when the Activate may go on; otherwise the Failed outcome naming the rule. */
export async function guardActivate(input: ActivateGuardInput): Promise<ScopedStop | null> {
  const { message, request, accessPolicy } = input;
  const resolved = request.status?.resolvedAccess;
  const accessPolicyName = request.spec?.accessPolicyRef?.name;
  const subject = request.spec?.subject?.role;
  if (resolved == null || accessPolicyName === undefined || subject === undefined) {
    return failed('InvalidRequest', `request ${message.request.name} names no access policy or subject`);
  }
  const terms: TermsRequest = {
    metadata: { name: request.metadata.name },
    spec: { accessPolicyRef: { name: accessPolicyName }, subject: { role: subject } },
    resolved,
  };
  const namespace = message.plan.namespace;
  const verdict = checkAccessTerms({
    namespace,
    namespaces: { request: message.request.namespace, policy: message.policy.namespace },
    request: terms,
    accessPolicy,
    targetPolicy: message.policy.name,
  });
  if (!verdict.ok) return failed(verdict.reason, verdict.message);
  // Read live: a role may be privileged in the database whatever the policy declares.
  const roles = resolved.memberships.map((m) => m.role);
  const rows = await new PrivilegeRepository(input.connection.db).reachable(roles);
  const findings = privilegedRoles(
    roles,
    rows.map((row) => ({ ...row, memberOf: row.member_of })),
  );
  const refusal = privilegedRefusal(
    findings,
    namespace,
    accessPolicy?.spec.allowPrivilegedRoles === true,
    input.operator,
  );
  return refusal === null ? null : failed('PrivilegedRole', refusal);
}
