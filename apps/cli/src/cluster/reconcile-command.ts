// `kubectl rolepolicy reconcile POLICY [--wait]`: asks for a reconcile now by setting the annotation
// `rolepolicy.io/reconcile-requested-at` (docs/planner.md), and with --wait reports how it ended.
import { RECONCILE_REQUESTED_AT_ANNOTATION, type PostgresPolicy } from '@rolepolicy/kube';

import { EXIT } from '../io.js';
import { printWritten, pollUntil, say, timeoutMs, type ClusterContext } from './context.js';

const POLICY = 'PostgresPolicy';

function ready(policy: PostgresPolicy) {
  return (policy.status?.conditions ?? []).find((c) => c.type === 'Ready');
}

/**
 * Handled when the planner recorded the request in `lastHandledReconcileAt` (it does so after planning
 * or converging) and Ready is no longer Unknown (an auto-approved plan applying); a failing pass never
 * records it, so that case ends at --timeout with Ready's reason and `last_error`.
 */
export async function reconcileCommand(
  ctx: ClusterContext,
  name: string,
  options: { readonly wait?: boolean; readonly timeout?: string },
): Promise<number> {
  const limit = options.wait ? timeoutMs(options.timeout) : 0;
  const requestedAt = ctx.now().toISOString();
  const patched = await ctx.cluster.patch<PostgresPolicy>(POLICY, name, {
    metadata: { annotations: { [RECONCILE_REQUESTED_AT_ANNOTATION]: requestedAt } },
  });
  printWritten(ctx, POLICY, patched, `reconcile requested (${requestedAt})`);
  if (!options.wait) return EXIT.ok;
  const { reached, value } = await pollUntil(
    ctx,
    () => ctx.cluster.get<PostgresPolicy>(POLICY, name),
    (p) => p.status?.lastHandledReconcileAt === requestedAt && ready(p)?.status !== 'Unknown',
    limit,
  );
  const condition = ready(value);
  const state = condition ? `Ready=${condition.status}/${condition.reason ?? ''}` : 'no Ready condition';
  const lines = [`policy ${name}: ${state}${condition?.message ? `: ${condition.message}` : ''}`];
  const plan = value.status?.current_plan_ref?.name;
  if (plan && condition?.reason === 'Planned') {
    lines.push(
      `plan ${plan} waits for a decision: kubectl rolepolicy approve ${plan} -n ${ctx.cluster.namespace}`,
    );
  }
  if (reached && condition?.status === 'True') {
    say(ctx, lines);
    return EXIT.ok;
  }
  if (value.status?.last_error) lines.push(`last error: ${value.status.last_error}`);
  if (!reached)
    lines.unshift(`rolepolicy: the reconcile requested at ${requestedAt} was not handled within --timeout`);
  ctx.io.stderr(lines.map((l) => `${l}\n`).join(''));
  return EXIT.notReached;
}
