// `kubectl rolepolicy plans | approve | deny | review`: the plans waiting for a person, the decision
// written with the caller's identity in one status update, and the plan's recorded review report.
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';

import { ApiException } from '@kubernetes/client-node';
import {
  planDecisionPatch,
  planDecisionProblem,
  type Decision,
  type PostgresPolicy,
  type PostgresPolicyPlan,
} from '@rolepolicy/kube';
import {
  formatReviewArtifactJson,
  formatReviewText,
  renderReviewHtml,
  type ReviewArtifact,
} from '@rolepolicy/review';

import { readPlanArtifact } from '../commands/review-plan.js';
import { CliError, EXIT } from '../io.js';
import { printWritten, pollUntil, say, timeoutMs, type ClusterContext } from './context.js';
import {
  isPendingDecision,
  planHeaders,
  planRow,
  planSummaryLines,
  planWarnings,
  type FindingCounts,
} from './describe.js';
import { whoAmI } from './identity.js';
import { apiMessage, describeApiError, resourceName } from './kube-client.js';
import { formatObjects, renderTable } from './table.js';

const PLAN = 'PostgresPolicyPlan';

/** The policies of the plans (for their warnings); a caller who may not list them still sees the plans. */
async function policiesByKey(ctx: ClusterContext): Promise<Map<string, PostgresPolicy>> {
  try {
    const policies = await ctx.cluster.list<PostgresPolicy>('PostgresPolicy');
    return new Map(policies.map((p) => [`${p.metadata.namespace}/${p.metadata.name}`, p]));
  } catch (error) {
    if (!(error instanceof CliError) || error.exitCode !== EXIT.refused) throw error;
    ctx.io.stderr(`rolepolicy: without the policies' plan_warnings: ${error.message}\n`);
    return new Map();
  }
}

function policyOf(
  plan: PostgresPolicyPlan,
  policies: Map<string, PostgresPolicy>,
): PostgresPolicy | undefined {
  return policies.get(`${plan.metadata.namespace}/${plan.spec.policyRef.name}`);
}

/** `plans`: plans waiting for a decision (every plan with --all), newest last. */
export async function plansCommand(ctx: ClusterContext, all: boolean): Promise<number> {
  const [plans, policies] = await Promise.all([
    ctx.cluster.list<PostgresPolicyPlan>(PLAN),
    policiesByKey(ctx),
  ]);
  const shown = plans
    .filter((p) => all || isPendingDecision(p))
    .sort((a, b) =>
      String(a.metadata.creationTimestamp ?? '').localeCompare(String(b.metadata.creationTimestamp ?? '')),
    );
  if (ctx.output !== 'table' && ctx.output !== 'wide') {
    ctx.io.stdout(formatObjects(shown, ctx.output, resourceName(PLAN), true));
    return EXIT.ok;
  }
  if (shown.length === 0) {
    const where = ctx.cluster.allNamespaces ? 'any namespace' : `namespace ${ctx.cluster.namespace}`;
    ctx.io.stderr(`No ${all ? '' : 'pending '}plans found in ${where}.\n`);
    return EXIT.ok;
  }
  const wide = ctx.output === 'wide';
  const now = ctx.now();
  const allNs = ctx.cluster.allNamespaces;
  ctx.io.stdout(
    renderTable(
      planHeaders(allNs, wide),
      shown.map((p) => planRow(p, policyOf(p, policies), now, allNs, wide)),
    ),
  );
  for (const plan of shown) {
    for (const warning of planWarnings(plan, policyOf(plan, policies))) {
      ctx.io.stderr(`warning: plan ${plan.metadata.name}: ${warning}\n`);
    }
  }
  return EXIT.ok;
}

async function findingCounts(ctx: ClusterContext, plan: PostgresPolicyPlan): Promise<FindingCounts | null> {
  try {
    const artifact = await readArtifact(ctx, plan.metadata.name ?? '');
    const counts = { error: 0, warning: 0, info: 0 };
    for (const finding of artifact.recorded.findings) counts[finding.severity] += 1;
    return counts;
  } catch {
    return null;
  }
}

function readArtifact(ctx: ClusterContext, name: string): Promise<ReviewArtifact> {
  const { custom, core, namespace } = ctx.cluster;
  return readPlanArtifact({ custom, core }, namespace, name);
}

/** Options of `approve` / `deny`. */
export interface DecideOptions {
  readonly message?: string;
  readonly wait?: boolean;
  readonly timeout?: string;
}

/**
 * `approve PLAN` / `deny PLAN`: reads the plan, shows what is decided, checks it can still be decided,
 * and writes the condition and decidedBy in one status update guarded by the resourceVersion it read.
 * A concurrent write (409) is read again and re-checked, never overwritten.
 */
export async function decidePlanCommand(
  ctx: ClusterContext,
  name: string,
  decision: Decision,
  options: DecideOptions,
): Promise<number> {
  const limit = options.wait ? timeoutMs(options.timeout) : 0;
  const what = ctx.cluster.describe(PLAN, name);
  let plan = await ctx.cluster.get<PostgresPolicyPlan>(PLAN, name);
  const policy = await ctx.cluster
    .get<PostgresPolicy>('PostgresPolicy', plan.spec.policyRef.name)
    .catch(() => undefined);
  say(ctx, planSummaryLines(plan, policy, await findingCounts(ctx, plan), ctx.now()));
  const refuse = (problem: string) =>
    new CliError(`${what}: cannot be ${decision.toLowerCase()}: ${problem}`, EXIT.refused);
  const first = planDecisionProblem(plan, decision);
  if (first) throw refuse(first);
  const decider = await whoAmI(ctx.cluster, ctx.io);
  for (let attempt = 1; ; attempt++) {
    const problem = planDecisionProblem(plan, decision);
    if (problem) throw refuse(problem);
    const patch = planDecisionPatch(plan, decision, decider, ctx.now().toISOString(), options.message);
    try {
      plan = await ctx.cluster.patchStatus<PostgresPolicyPlan>(PLAN, name, patch);
      break;
    } catch (error) {
      if (error instanceof ApiException && error.code === 409 && attempt < 5) {
        ctx.io.stderr(
          `rolepolicy: ${what} changed while deciding (${apiMessage(error)}); reading it again\n`,
        );
        plan = await ctx.cluster.get<PostgresPolicyPlan>(PLAN, name);
        continue;
      }
      throw describeApiError(what, error);
    }
  }
  printWritten(ctx, PLAN, plan, `${decision.toLowerCase()} (decidedBy ${decider.username})`);
  if (!options.wait) return EXIT.ok;
  return waitForPlan(ctx, name, decision, limit);
}

const PLAN_END: Readonly<Record<Decision, string>> = { Approved: 'Applied', Denied: 'Rejected' };

async function waitForPlan(
  ctx: ClusterContext,
  name: string,
  decision: Decision,
  limit: number,
): Promise<number> {
  const goal = PLAN_END[decision];
  const terminal = new Set(['Applied', 'Failed', 'Superseded', 'Rejected']);
  const { reached, value } = await pollUntil(
    ctx,
    () => ctx.cluster.get<PostgresPolicyPlan>(PLAN, name),
    (p) => terminal.has(p.status?.phase ?? 'Pending'),
    limit,
  );
  const phase = value.status?.phase ?? 'Pending';
  if (reached && phase === goal) {
    say(ctx, [`plan ${name}: ${phase}${value.status?.appliedAt ? ` at ${value.status.appliedAt}` : ''}`]);
    return EXIT.ok;
  }
  const why = value.status?.lastError ? `: ${value.status.lastError}` : '';
  ctx.io.stderr(
    reached
      ? `rolepolicy: plan ${name} ended ${phase}, not ${goal}${why}\n`
      : `rolepolicy: plan ${name} is still ${phase} after --timeout; waiting for ${goal}${why}\n`,
  );
  return EXIT.notReached;
}

/** Options of `review PLAN`. */
export interface ReviewOptions {
  readonly format?: string;
  readonly file?: string;
  readonly open?: boolean;
}

/**
 * `review PLAN`: the planner's recorded artifact (ConfigMap `<plan>-review`), as the HTML report written
 * to a file (default `<plan>-review.html`; `--file -` for stdout), optionally opened, or as text/json.
 */
export async function reviewCommand(
  ctx: ClusterContext,
  name: string,
  options: ReviewOptions,
): Promise<number> {
  await ctx.cluster.get<PostgresPolicyPlan>(PLAN, name);
  const artifact = await readArtifact(ctx, name);
  const format = options.format ?? 'html';
  if (format === 'text') ctx.io.stdout(formatReviewText(artifact));
  else if (format === 'json') ctx.io.stdout(formatReviewArtifactJson(artifact));
  else if (format !== 'html') {
    throw new CliError(`--format: must be html, text or json, got "${format}"`, EXIT.usage);
  } else {
    const html = renderReviewHtml(artifact);
    const file = options.file ?? `${name}-review.html`;
    if (file === '-') ctx.io.stdout(html);
    else {
      await writeFile(file, html, 'utf8');
      ctx.io.stdout(`wrote ${file}\n`);
      if (options.open) openFile(ctx, file);
    }
  }
  return EXIT.ok;
}

function openFile(ctx: ClusterContext, file: string): void {
  const opener = process.platform === 'darwin' ? 'open' : 'xdg-open';
  const child = spawn(opener, [file], { detached: true, stdio: 'ignore' });
  child.on('error', () => ctx.io.stderr(`rolepolicy: cannot run ${opener}; open ${file} yourself\n`));
  child.unref();
}
