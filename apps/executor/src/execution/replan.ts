// Re-planning from the request's inputs and a snapshot read under the lock: the same pipeline the planner
// ran (expand, scope, computePlan, changeDigest), so equal inputs give the approved digest. Pure.
import type { ConnectionSpec } from '@rolepolicy/catalog';
import type { ExecuteRequestV2 } from '@rolepolicy/contracts';
import {
  CONTENT_FIELDS,
  changeDigest,
  contentDigest,
  computePlan,
  deriveManagedScope,
  expandPolicy,
  type CatalogSnapshot,
  type ChangeDigest,
  type DesiredState,
  type ManagedScope,
  type PlanResult,
  type PolicyContent,
  type ReconciliationMode,
  type TargetIdentityReading,
} from '@rolepolicy/policy';
import type { FreshState } from './fresh-verdict.js';
import type { ResultFacts } from './result.js';

/** What a plan is computed from besides the snapshot; the request's own, or the fresh policy's. */
export interface PlanningInputs {
  readonly content: unknown;
  readonly mode: ReconciliationMode;
  readonly allowSchemaOwnerTransfers: boolean;
}

/** The inputs the request carries (what the planner planned with). */
export function requestInputs(request: ExecuteRequestV2): PlanningInputs {
  return {
    content: request.content,
    mode: request.mode,
    allowSchemaOwnerTransfers: request.allowSchemaOwnerTransfers,
  };
}

// Content digests by object: an execution compares the request's content with the fresh spec before the lock
// and again under it, and both objects stay the same (the decoded request; the cache's memoized policy), so
// each is canonicalised and hashed once. Both are read-only values, never mutated after decoding.
const contentDigests = new WeakMap<object, string>();

function digestOf(content: unknown): string {
  if (typeof content !== 'object' || content === null) return contentDigest(content).digest;
  let digest = contentDigests.get(content);
  if (digest === undefined) {
    digest = contentDigest(content).digest;
    contentDigests.set(content, digest);
  }
  return digest;
}

/** Equal content digests; content that is not an object is never equal to anything. */
function sameContent(a: unknown, b: unknown): boolean {
  try {
    return digestOf(a) === digestOf(b);
  } catch {
    return false;
  }
}

/** The part of a freshly read policy spec that planning reads. */
export interface FreshPolicySpec extends PolicyContent {
  readonly allow_schema_owner_transfers?: boolean;
}

/**
 * The inputs of the policy as it is now: the request's own when the content is unchanged (same content
 * digest), else the fresh spec's content fields. Re-planning from an edited policy gives the approved digest
 * only when the edit left the effects identical; any other edit is refused as a digest mismatch.
 */
export function freshInputs(request: ExecuteRequestV2, spec: FreshPolicySpec): PlanningInputs {
  const allowSchemaOwnerTransfers = spec.allow_schema_owner_transfers === true;
  if (sameContent(spec, request.content)) {
    return { ...requestInputs(request), allowSchemaOwnerTransfers };
  }
  const content: Record<string, unknown> = {};
  for (const field of CONTENT_FIELDS) {
    if (spec[field] !== undefined) content[field] = spec[field];
  }
  return { content, mode: spec.reconciliation_mode ?? 'authoritative', allowSchemaOwnerTransfers };
}

/** The desired state and managed scope of a request, or why its content is invalid. */
export type Expanded =
  | { readonly ok: true; readonly desired: DesiredState; readonly scope: ManagedScope }
  | { readonly ok: false; readonly message: string };

/** Expands the request's policy content (validation errors name paths, never values of secrets). */
export function expandRequest(
  request: ExecuteRequestV2,
  inputs: PlanningInputs = requestInputs(request),
): Expanded {
  const expansion = expandPolicy(inputs.content as PolicyContent, { policyName: request.policy.name });
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
  inputs: PlanningInputs = requestInputs(request),
): Replanned {
  const plan = computePlan({
    desired: expanded.desired,
    snapshot,
    mode: inputs.mode,
    passwordSources: request.passwordSources,
    appliedPasswordSourceVersions: request.appliedPasswordSourceVersions,
    allowSchemaOwnerTransfers: inputs.allowSchemaOwnerTransfers,
  });
  const digest = changeDigest({
    mode: inputs.mode,
    target: request.target,
    targetPhysicalIdentity: snapshot.identity.physical,
    targetLogicalFingerprint: snapshot.identity.logical_fingerprint,
    ownedRoles: expanded.scope.roles,
    ownedSchemas: expanded.scope.schemas,
    changes: plan.changes,
  });
  return { plan, digest };
}

/** What the executor has before taking the lock, or the outcome that ends the request early. */
export type Prepared =
  | {
      readonly ok: true;
      readonly inputs: PlanningInputs;
      readonly expanded: Extract<Expanded, { ok: true }>;
      readonly connection: ConnectionSpec;
    }
  | { readonly ok: false; readonly facts: ResultFacts };

/** What the executor read under the lock: the catalog, the fresh plan and policy, the plan re-made. */
export type LockedRead = {
  readonly snapshot: CatalogSnapshot;
  readonly fresh: FreshState;
  readonly plan: ReturnType<typeof replan>['plan'];
  readonly digest: ReturnType<typeof replan>['digest'];
  readonly observed: TargetIdentityReading;
};
