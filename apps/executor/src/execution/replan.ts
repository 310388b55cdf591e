// Re-planning from the request's inputs and a snapshot read under the lock: the same pipeline the planner
// ran (expand, scope, computePlan, changeDigest), so equal inputs give the approved digest. Pure.
import type { ExecuteRequestV2 } from '@rolepolicy/contracts';
import {
  changeDigest,
  computePlan,
  deriveManagedScope,
  expandPolicy,
  type CatalogSnapshot,
  type ChangeDigest,
  type DesiredState,
  type ManagedScope,
  type PlanResult,
  type PolicyContent,
} from '@rolepolicy/policy';

/** The desired state and managed scope of a request, or why its content is invalid. */
export type Expanded =
  | { readonly ok: true; readonly desired: DesiredState; readonly scope: ManagedScope }
  | { readonly ok: false; readonly message: string };

/** Expands the request's policy content (validation errors name paths, never values of secrets). */
export function expandRequest(request: ExecuteRequestV2): Expanded {
  const expansion = expandPolicy(request.content as PolicyContent, { policyName: request.policy.name });
  if (!expansion.ok) {
    const errors = expansion.errors.slice(0, 5).map((e) => `${e.path}: ${e.message}`);
    return { ok: false, message: `the policy content is invalid: ${errors.join('; ')}` };
  }
  return { ok: true, desired: expansion.desired, scope: deriveManagedScope(expansion.desired) };
}

/** A plan recomputed under the lock and its approval digest. */
export interface Replanned {
  readonly plan: PlanResult;
  readonly digest: ChangeDigest;
}

/** Computes the plan and its digest exactly as the planner does for the same inputs. */
export function replan(
  request: ExecuteRequestV2,
  expanded: { readonly desired: DesiredState; readonly scope: ManagedScope },
  snapshot: CatalogSnapshot,
): Replanned {
  const plan = computePlan({
    desired: expanded.desired,
    snapshot,
    mode: request.mode,
    passwordSources: request.passwordSources,
    appliedPasswordSourceVersions: request.appliedPasswordSourceVersions,
    allowSchemaOwnerTransfers: request.allowSchemaOwnerTransfers,
  });
  const digest = changeDigest({
    mode: request.mode,
    target: request.target,
    targetPhysicalIdentity: snapshot.identity.physical,
    targetLogicalFingerprint: snapshot.identity.logical_fingerprint,
    ownedRoles: expanded.scope.roles,
    ownedSchemas: expanded.scope.schemas,
    changes: plan.changes,
  });
  return { plan, digest };
}
