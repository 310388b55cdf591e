// Maps lifecycle steps onto the versioned NATS payloads of @rolepolicy/contracts, so the wiring sends
// exactly what the decision said (and a contract change shows up here as a type error).

import type { ExecuteRequestV2, ResourceSequences } from '@rolepolicy/contracts';
import type { ReconciliationMode } from '@rolepolicy/policy';
import { API_VERSION } from './resources.js';
import type { ExecutionRequest } from './steps.js';

/** What the executor needs besides the step to re-plan under its lock (no secret among it). */
export interface ExecutionContext {
  /** The target reference hashed into the digest, byte for byte. */
  readonly target: string;
  /** The policy content the plan was computed from (`spec`). */
  readonly content: unknown;
  readonly mode: ReconciliationMode;
  readonly allowSchemaOwnerTransfers: boolean;
  readonly requirePhysicalIdentity: boolean;
  /** The identity the plan recorded. */
  readonly approvedIdentity: { readonly physical: string | null; readonly logical: string | null };
  readonly passwordSources: Readonly<Record<string, string>>;
  readonly appliedPasswordSourceVersions: Readonly<Record<string, string>>;
  /** What the sender's cache had applied of policies and plans (absent: the executor syncs instead). */
  readonly resourceSequences?: ResourceSequences;
}

/** The `rp.execute.request` v2 payload for an execution step. */
export function toExecuteRequestMessage(
  request: ExecutionRequest,
  context: ExecutionContext,
): ExecuteRequestV2 {
  return {
    v: 2,
    plan: {
      apiVersion: API_VERSION,
      kind: 'PostgresPolicyPlan',
      namespace: request.namespace,
      name: request.planName,
    },
    policy: {
      apiVersion: API_VERSION,
      kind: 'PostgresPolicy',
      namespace: request.namespace,
      name: request.policyName,
      uid: request.policyUid,
    },
    changeDigest: request.changeDigest,
    changeDigestEncoding: request.changeDigestEncoding,
    idempotencyKey: request.idempotencyKey,
    target: context.target,
    content: context.content,
    mode: context.mode,
    allowSchemaOwnerTransfers: context.allowSchemaOwnerTransfers,
    requirePhysicalIdentity: context.requirePhysicalIdentity,
    approvedIdentity: {
      physical: context.approvedIdentity.physical,
      logical: context.approvedIdentity.logical,
    },
    passwordSources: { ...context.passwordSources },
    appliedPasswordSourceVersions: { ...context.appliedPasswordSourceVersions },
    ...(context.resourceSequences === undefined
      ? {}
      : { resourceSequences: { ...context.resourceSequences } }),
  };
}
