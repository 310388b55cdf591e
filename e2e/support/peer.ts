// What the peer-ported end-to-end files share: policy manifests applied with kubectl, and waits on a
// policy's Ready condition, other conditions and `last_error` read back with kubectl jsonpath.
import { stringify } from 'yaml';
import { GROUP, VERSION } from '@rolepolicy/kube';
import type { Kubectl } from './kubectl.js';
import { waitFor } from './wait.js';

/** The PostgresPolicy short name kubectl resolves through discovery. */
export const PGR = 'pgr';
/** The PostgresPolicyPlan short name. */
export const PGPLAN = 'pgplan';

/** A PostgresPolicy manifest as YAML. */
export function policyYaml(name: string, spec: Record<string, unknown>): string {
  return stringify({ apiVersion: `${GROUP}/${VERSION}`, kind: 'PostgresPolicy', metadata: { name }, spec });
}

/** `kubectl apply` of a policy; throws with kubectl's stderr when admission refuses it. */
export async function applyPolicy(k: Kubectl, name: string, spec: Record<string, unknown>): Promise<void> {
  await k.ok(['apply', '-f', '-'], policyYaml(name, spec));
}

/** The status and reason of one condition type, as kubectl prints them ('' when absent). */
export async function conditionOf(
  k: Kubectl,
  policy: string,
  type: string,
): Promise<{ status: string; reason: string }> {
  const [status = '', reason = ''] = (
    await k.jsonpath(
      PGR,
      policy,
      `{.status.conditions[?(@.type=="${type}")].status}|{.status.conditions[?(@.type=="${type}")].reason}`,
    )
  ).split('|');
  return { status, reason };
}

async function describePolicy(k: Kubectl, policy: string): Promise<unknown> {
  return k.jsonpath(PGR, policy, '{.status}');
}

/** Waits for `Ready=<status>` with `reason` (the peer's wait_for_ready_status_reason). */
export async function waitReady(
  k: Kubectl,
  policy: string,
  status: 'True' | 'False',
  reason?: string,
  timeoutMs = 45_000,
): Promise<void> {
  await waitFor(
    `${policy}: Ready=${status}${reason ? `/${reason}` : ''}`,
    async () => {
      const ready = await conditionOf(k, policy, 'Ready');
      return ready.status === status && (reason === undefined || ready.reason === reason);
    },
    { timeoutMs, intervalMs: 250, describe: () => describePolicy(k, policy) },
  );
}

/** Waits for a condition type to have `status` (the peer's wait_for_condition_status). */
export async function waitCondition(
  k: Kubectl,
  policy: string,
  type: string,
  status: string,
  timeoutMs = 45_000,
): Promise<void> {
  await waitFor(
    `${policy}: ${type}=${status}`,
    async () => (await conditionOf(k, policy, type)).status === status,
    { timeoutMs, intervalMs: 250, describe: () => describePolicy(k, policy) },
  );
}

/** Waits until `status.last_error` contains `text` (the peer's wait_for_last_error_contains). */
export async function waitLastError(
  k: Kubectl,
  policy: string,
  text: string,
  timeoutMs = 45_000,
): Promise<string> {
  return waitFor(
    `${policy}: last_error containing ${JSON.stringify(text)}`,
    async () => {
      const error = (await k.jsonpath(PGR, policy, '{.status.last_error}')).replace(/\s+/g, ' ');
      return error.includes(text) ? error : undefined;
    },
    { timeoutMs, intervalMs: 250, describe: () => describePolicy(k, policy) },
  );
}

/** Waits for `status.current_plan_ref.name` and returns it. */
export async function waitPlanRef(k: Kubectl, policy: string, timeoutMs = 45_000): Promise<string> {
  return waitFor(
    `${policy}: current_plan_ref`,
    async () => (await k.jsonpath(PGR, policy, '{.status.current_plan_ref.name}')) || undefined,
    { timeoutMs, intervalMs: 250, describe: () => describePolicy(k, policy) },
  );
}

/**
 * Records a decision the way a reviewer with kubectl does: read the plan's conditions, drop any Approved
 * or Denied entry, append the decision, and merge-patch `/status` with `decidedBy` in the same write.
 */
export async function decidePlan(
  k: Kubectl,
  plan: string,
  type: 'Approved' | 'Denied',
  username: string,
): Promise<void> {
  const current = JSON.parse(await k.ok(['get', PGPLAN, plan, '-o', 'json'])) as {
    status?: { conditions?: { type: string }[] };
  };
  const conditions = (current.status?.conditions ?? []).filter(
    (c) => c.type !== 'Approved' && c.type !== 'Denied',
  );
  conditions.push({
    type,
    status: 'True',
    reason: type === 'Approved' ? 'ApprovedByReviewer' : 'DeniedByReviewer',
    message: 'recorded with kubectl',
    last_transition_time: new Date().toISOString(),
  } as { type: string });
  const patch = JSON.stringify({ status: { conditions, decidedBy: { username } } });
  await k.ok(['patch', PGPLAN, plan, '--subresource=status', '--type=merge', '-p', patch]);
}

/** Waits for a core/v1 Event with `reason` about the object named `name` (the peer's wait_for_event_reason). */
export async function waitEvent(k: Kubectl, name: string, reason: string, timeoutMs = 45_000): Promise<void> {
  const reasons = async () =>
    (
      await k.ok([
        'get',
        'events',
        '--field-selector',
        `involvedObject.name=${name}`,
        '-o',
        'jsonpath={range .items[*]}{.reason}{"\\n"}{end}',
      ])
    )
      .split('\n')
      .filter((r) => r !== '');
  await waitFor(`${name}: Event ${reason}`, async () => (await reasons()).includes(reason), {
    timeoutMs,
    intervalMs: 250,
    describe: reasons,
  });
}
