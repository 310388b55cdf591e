// Maps lifecycle steps onto the versioned NATS payloads of @rolepolicy/contracts, so the wiring sends
// exactly what the decision said (and a contract change shows up here as a type error).

import type { ExecuteRequestV1 } from '@rolepolicy/contracts';
import { API_VERSION } from './resources.js';
import type { ExecutionRequest } from './steps.js';

/**
 * The `rp.execute.request` payload for an execution step. The contract has no encoding field yet; the
 * executor reads `changeDigestEncoding` from the plan, and `executionVerdict` compares both.
 */
export function toExecuteRequestMessage(request: ExecutionRequest): ExecuteRequestV1 {
  return {
    v: 1,
    plan: {
      apiVersion: API_VERSION,
      kind: 'PostgresPolicyPlan',
      namespace: request.namespace,
      name: request.planName,
    },
    changeDigest: request.changeDigest,
    idempotencyKey: request.idempotencyKey,
  };
}
