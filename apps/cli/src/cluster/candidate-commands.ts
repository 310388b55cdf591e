// `kubectl rolepolicy candidate create | list | status | diff`: proposals of policy content, planned by
// the service in the policy's context; their plans are decided with `approve` like any other plan.
import {
  REVIEW_CONFIGMAP_ANNOTATION,
  type PostgresPolicy,
  type PostgresPolicyCandidate,
  type PostgresPolicyPlan,
} from '@rolepolicy/kube';
import { contentDigest } from '@rolepolicy/policy';
import { formatReviewText } from '@rolepolicy/review';

import { parseCandidateText } from '../commands/candidate-diff.js';
import { CliError, EXIT } from '../io.js';
import { parsePolicyText, readPolicyText } from '../policy-file.js';
import { printWritten, say, type ClusterContext } from './context.js';
import { candidateHeaders, candidateRow, planSummaryLines } from './describe.js';
import { resourceName } from './kube-client.js';
import { readPlanArtifact } from '../commands/review-plan.js';
import { formatObjects, renderTable, relative } from './table.js';

const CANDIDATE = 'PostgresPolicyCandidate';

/** Options of `candidate create`. */
export interface CandidateCreateOptions {
  readonly file: string;
  readonly name?: string;
  readonly replaces?: string;
}

/**
 * The content of `-f`: a PostgresPolicyCandidate manifest (its spec.content), a PostgresPolicy manifest
 * (its content fields) or bare policy content.
 */
function contentOf(text: string): Record<string, unknown> {
  if (/^\s*kind:\s*PostgresPolicyCandidate\s*$/m.test(text)) return parseCandidateText(text).content;
  const loaded = parsePolicyText(text);
  if (loaded.content === null || typeof loaded.content !== 'object' || Array.isArray(loaded.content)) {
    throw new CliError(
      '-f: expected policy content, one PostgresPolicy or one PostgresPolicyCandidate',
      EXIT.usage,
    );
  }
  return loaded.content as Record<string, unknown>;
}

/**
 * `candidate create POLICY -f FILE`: the name defaults to `<policy>-<12 hex of the content digest>`, so
 * proposing the same content twice names the same object (the API answers AlreadyExists).
 */
export async function candidateCreateCommand(
  ctx: ClusterContext,
  policy: string,
  options: CandidateCreateOptions,
): Promise<number> {
  const content = contentOf(await readPolicyText(options.file, ctx.io.stdin));
  const digest = contentDigest(content).digest;
  const name = options.name ?? `${policy}-${digest.replace(/^sha256:/, '').slice(0, 12)}`;
  await ctx.cluster.get<PostgresPolicy>('PostgresPolicy', policy);
  const spec = {
    policyRef: { name: policy },
    content,
    ...(options.replaces !== undefined ? { replaces: options.replaces } : {}),
  };
  const created = await ctx.cluster.create<PostgresPolicyCandidate>(CANDIDATE, { name }, spec);
  printWritten(ctx, CANDIDATE, created, 'created');
  say(ctx, [`content digest: ${digest}`]);
  return EXIT.ok;
}

/** `candidate list`. */
export async function candidateListCommand(ctx: ClusterContext): Promise<number> {
  const candidates = (await ctx.cluster.list<PostgresPolicyCandidate>(CANDIDATE)).sort((a, b) =>
    String(a.metadata.creationTimestamp ?? '').localeCompare(String(b.metadata.creationTimestamp ?? '')),
  );
  if (ctx.output !== 'table' && ctx.output !== 'wide') {
    ctx.io.stdout(formatObjects(candidates, ctx.output, resourceName(CANDIDATE), true));
    return EXIT.ok;
  }
  if (candidates.length === 0) {
    ctx.io.stderr(`No candidates found in namespace ${ctx.cluster.namespace}.\n`);
    return EXIT.ok;
  }
  const now = ctx.now();
  const allNs = ctx.cluster.allNamespaces;
  ctx.io.stdout(
    renderTable(
      candidateHeaders(allNs),
      candidates.map((c) => candidateRow(c, now, allNs)),
    ),
  );
  return EXIT.ok;
}

async function planOf(
  ctx: ClusterContext,
  candidate: PostgresPolicyCandidate,
): Promise<PostgresPolicyPlan | undefined> {
  const ref = candidate.status?.planRef?.name;
  return ref
    ? ctx.cluster.get<PostgresPolicyPlan>('PostgresPolicyPlan', ref).catch(() => undefined)
    : undefined;
}

/** `candidate status NAME`: phase, conditions, digests, its plan and what to do next. */
export async function candidateStatusCommand(ctx: ClusterContext, name: string): Promise<number> {
  const candidate = await ctx.cluster.get<PostgresPolicyCandidate>(CANDIDATE, name);
  if (ctx.output !== 'table' && ctx.output !== 'wide') {
    ctx.io.stdout(formatObjects([candidate], ctx.output, resourceName(CANDIDATE), false));
    return EXIT.ok;
  }
  const now = ctx.now();
  const policy = await ctx.cluster
    .get<PostgresPolicy>('PostgresPolicy', candidate.spec.policyRef.name)
    .catch(() => undefined);
  const status = candidate.status;
  const lines = [
    `Candidate ${candidate.metadata.namespace}/${name} for policy ${candidate.spec.policyRef.name}`,
    `  phase:          ${status?.phase ?? 'Pending'}`,
    `  content digest: ${status?.contentDigest ?? '(not stamped yet)'}`,
    `  policy digest:  ${policy?.status?.content_digest ?? '(unknown)'}${policy?.status?.content_digest && policy.status.content_digest === status?.contentDigest ? ' (the policy carries this content)' : ''}`,
  ];
  if (candidate.spec.replaces) lines.push(`  replaces:       ${candidate.spec.replaces}`);
  for (const c of status?.conditions ?? []) {
    const when = c.last_transition_time ? ` (${relative(c.last_transition_time, now)})` : '';
    lines.push(
      `  condition:      ${c.type}=${c.status} ${c.reason ?? ''}${when}${c.message ? `: ${c.message}` : ''}`,
    );
  }
  const plan = await planOf(ctx, candidate);
  if (plan) {
    lines.push('', ...planSummaryLines(plan, undefined, null, now).filter((l) => !l.includes('review:')));
    lines.push(`  phase:      ${plan.status?.phase ?? 'Pending'}`);
    if ((plan.status?.phase ?? 'Pending') === 'Pending') {
      lines.push(
        `next: kubectl rolepolicy approve ${plan.metadata.name} -n ${ctx.cluster.namespace}, then merge the content into the policy`,
      );
    }
  }
  ctx.io.stdout(lines.map((l) => `${l}\n`).join(''));
  return EXIT.ok;
}

/**
 * `candidate diff NAME` (in the cluster): what the candidate's plan changes, from the review artifact the
 * planner recorded (or the plan's SQL preview when there is none). Exit 0 no changes, 2 changes pending.
 */
export async function candidateClusterDiffCommand(ctx: ClusterContext, name: string): Promise<number> {
  const candidate = await ctx.cluster.get<PostgresPolicyCandidate>(CANDIDATE, name);
  ctx.io.stdout(`content digest: ${candidate.status?.contentDigest ?? '(not stamped yet)'}\n`);
  const plan = await planOf(ctx, candidate);
  if (!plan) {
    const ready = (candidate.status?.conditions ?? []).find((c) => c.type === 'Ready');
    if (ready?.reason === 'NoEffects') {
      ctx.io.stdout('No changes: the database already matches the proposal.\n');
      return EXIT.ok;
    }
    throw new CliError(
      `${ctx.cluster.describe(CANDIDATE, name)} has no plan yet (status.planRef unset${ready ? `; Ready=${ready.status}/${ready.reason ?? ''}: ${ready.message ?? ''}` : ''})`,
      EXIT.refused,
    );
  }
  if (plan.metadata.annotations?.[REVIEW_CONFIGMAP_ANNOTATION]) {
    const { custom, core, namespace } = ctx.cluster;
    ctx.io.stdout(
      formatReviewText(await readPlanArtifact({ custom, core }, namespace, plan.metadata.name ?? '')),
    );
  } else {
    ctx.io.stdout(`${planSummaryLines(plan, undefined, null, ctx.now()).join('\n')}\n`);
    if (plan.status?.sqlInline) ctx.io.stdout(`${plan.status.sqlInline}\n`);
  }
  return (plan.status?.changeSummary?.total ?? 0) > 0 ? EXIT.pending : EXIT.ok;
}
