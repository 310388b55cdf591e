// Plan status written by the executor through the k8s-gateway (`rp.k8s.cmd.executor.patch-status`): Applying before
// the SQL, Applied or Failed after. The bodies are the lifecycle's own patches; messages are redacted there.
import {
  JetStreamPublisher,
  SUBJECT_ROOT,
  k8sCommandContract,
  k8sCommandSubject,
  policyOrderingKey,
  type ExecuteRequestV2,
} from '@rolepolicy/contracts';
import {
  appliedPatch,
  applyingPatch,
  failedPatch,
  type PostgresPolicyPlan,
} from '@rolepolicy/plan-lifecycle';

/** Which status the executor writes on a plan. */
export type PlanStatusWrite =
  | { readonly phase: 'Applying' }
  | { readonly phase: 'Applied' }
  | { readonly phase: 'Failed'; readonly reason: string; readonly message: string };

/** Sends plan status patches; resolves once the command is stored in JetStream. */
export interface PlanStatusWriter {
  write(
    request: ExecuteRequestV2,
    plan: PostgresPolicyPlan,
    write: PlanStatusWrite,
    now: Date,
  ): Promise<void>;
}

/**
 * Writer publishing `patch-status` commands under `subjectRoot` (default `rp`). The idempotency key (also
 * the JetStream message id) is `<request key>/status/<phase>`, so a redelivered request does not write twice.
 */
export function gatewayPlanStatus(
  publisher: JetStreamPublisher,
  subjectRoot: string = SUBJECT_ROOT,
): PlanStatusWriter {
  const subject = k8sCommandSubject('executor', 'patch-status', subjectRoot);
  const contract = { ...k8sCommandContract, subject: `${subjectRoot}.k8s.cmd.>` };
  return {
    write: async (request, plan, write, now) => {
      const at = now.toISOString();
      const patch =
        write.phase === 'Applying'
          ? applyingPatch(plan, at)
          : write.phase === 'Applied'
            ? appliedPatch(plan, at)
            : failedPatch(plan, write.reason, write.message, at);
      const idempotencyKey = `${request.idempotencyKey}/status/${write.phase}`;
      await publisher.publish(
        contract,
        subject,
        {
          v: 1,
          command: 'patch-status',
          target: request.plan,
          status: patch.status as Record<string, unknown>,
          idempotencyKey,
          // In the order of the planner's writes about the same policy (its plan create came first).
          orderingKey: policyOrderingKey(request.policy.namespace, request.policy.name),
        },
        idempotencyKey,
      );
    },
  };
}
