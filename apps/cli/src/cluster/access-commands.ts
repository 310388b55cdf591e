// `kubectl rolepolicy access request | approve | deny | list`: time-boxed access from the requester's
// and the approver's side. An approval binds the request's own resolvedAccess (bundleHash,
// grantedDuration): nothing a person types can end up in it.
import { ApiException } from '@kubernetes/client-node';
import {
  requestDecisionPatch,
  requestDecisionProblem,
  type Decision,
  type EphemeralAccessPolicy,
  type EphemeralAccessRequest,
} from '@rolepolicy/kube';
import { parseEphemeralDuration } from '@rolepolicy/policy';

import { CliError, EXIT } from '../io.js';
import { printWritten, pollUntil, say, timeoutMs, type ClusterContext } from './context.js';
import { requestHeaders, requestRow, requestSummaryLines } from './describe.js';
import { whoAmI } from './identity.js';
import { apiMessage, describeApiError, resourceName } from './kube-client.js';
import { formatObjects, humanSeconds, renderTable } from './table.js';

const REQUEST = 'EphemeralAccessRequest';
const ACCESS_POLICY = 'EphemeralAccessPolicy';

/** Phases a request never leaves (docs/ephemeral-access.md). */
const TERMINAL = new Set(['Ended', 'Revoked', 'Cancelled', 'Denied', 'ApprovalExpired', 'Failed']);

/** Options of `access request`. */
export interface RequestOptions {
  readonly subject: string;
  readonly for?: string;
  readonly justification?: string;
  readonly name?: string;
  readonly wait?: boolean;
  readonly timeout?: string;
}

/** Seconds of a spec duration, or undefined when it does not parse. */
function seconds(text: string | null | undefined): number | undefined {
  if (!text) return undefined;
  const parsed = parseEphemeralDuration(text);
  return parsed.ok ? parsed.seconds : undefined;
}

/**
 * Checks what the access policy says before creating the request, so the person hears the rule now
 * rather than from `Resolved=False` later. The scheduler checks again (it is the authority).
 */
function accessPolicyProblem(policy: EphemeralAccessPolicy, options: RequestOptions): string | null {
  if (options.for === undefined && !policy.spec.defaultDuration) {
    return '--for: required, the access policy has no spec.defaultDuration';
  }
  const maximum = seconds(policy.spec.maximumDuration);
  const requested = seconds(options.for ?? policy.spec.defaultDuration);
  if (requested !== undefined && maximum !== undefined && requested > maximum) {
    const max = policy.spec.maximumDuration;
    const readable = humanSeconds(maximum) === max ? '' : ` (${humanSeconds(maximum)})`;
    return `--for ${options.for ?? policy.spec.defaultDuration} exceeds the access policy's spec.maximumDuration ${max}${readable}`;
  }
  if (policy.spec.justification.required && !options.justification?.trim()) {
    return '--justification: required, the access policy sets spec.justification.required: true';
  }
  if (policy.spec.suspend)
    return 'the access policy is suspended (spec.suspend: true): it admits no new access';
  return null;
}

/** `access request POLICY --subject ROLE [--for 30m] [--justification TEXT]`. */
export async function requestAccessCommand(
  ctx: ClusterContext,
  accessPolicy: string,
  options: RequestOptions,
): Promise<number> {
  if (options.for !== undefined) {
    const parsed = parseEphemeralDuration(options.for);
    if (!parsed.ok) throw new CliError(`--for: ${parsed.message}`, EXIT.usage);
  }
  const limit = options.wait ? timeoutMs(options.timeout) : 0;
  const policy = await ctx.cluster.get<EphemeralAccessPolicy>(ACCESS_POLICY, accessPolicy);
  const problem = accessPolicyProblem(policy, options);
  if (problem)
    throw new CliError(`${ctx.cluster.describe(ACCESS_POLICY, accessPolicy)}: ${problem}`, EXIT.refused);
  const requester = await whoAmI(ctx.cluster, ctx.io);
  const spec = {
    accessPolicyRef: { name: accessPolicy },
    subject: { role: options.subject },
    requestedBy: {
      username: requester.username,
      ...(requester.uid ? { uid: requester.uid } : {}),
      groups: (requester.groups ?? []).slice(0, 64),
    },
    ...(options.for !== undefined ? { requestedDuration: options.for } : {}),
    ...(options.justification !== undefined ? { justification: options.justification } : {}),
  };
  const metadata = options.name !== undefined ? { name: options.name } : { generateName: `${accessPolicy}-` };
  const created = await ctx.cluster.create<EphemeralAccessRequest>(REQUEST, metadata, spec);
  printWritten(ctx, REQUEST, created, 'created');
  if (!options.wait) return EXIT.ok;
  return waitForRequest(ctx, created.metadata.name ?? '', ['PendingApproval', 'Active'], limit);
}

async function waitForRequest(
  ctx: ClusterContext,
  name: string,
  goals: readonly string[],
  limit: number,
): Promise<number> {
  const { reached, value } = await pollUntil(
    ctx,
    () => ctx.cluster.get<EphemeralAccessRequest>(REQUEST, name),
    (r) => goals.includes(r.status?.phase ?? 'Pending') || TERMINAL.has(r.status?.phase ?? 'Pending'),
    limit,
  );
  const phase = value.status?.phase ?? 'Pending';
  if (reached && goals.includes(phase)) {
    const lines = [`request ${name}: ${phase}`];
    if (phase === 'PendingApproval') {
      lines.push(
        `waiting for approval: kubectl rolepolicy access approve ${name} -n ${ctx.cluster.namespace}`,
      );
    }
    if (value.status?.expiresAt) lines.push(`access ends at ${value.status.expiresAt}`);
    say(ctx, lines);
    return EXIT.ok;
  }
  const why = value.status?.lastError ? `: ${value.status.lastError}` : '';
  ctx.io.stderr(
    reached
      ? `rolepolicy: request ${name} ended ${phase}, not ${goals.join(' or ')}${why}\n`
      : `rolepolicy: request ${name} is still ${phase} after --timeout${why}\n`,
  );
  return EXIT.notReached;
}

/** Options of `access approve` / `access deny`. */
export interface AccessDecideOptions {
  readonly message?: string;
  readonly wait?: boolean;
  readonly timeout?: string;
}

/**
 * `access approve REQUEST` / `access deny REQUEST`: shows the bundle, checks the request can take the
 * decision (phase, approval window, no earlier decision), writes it bound to `resolvedAccess`.
 */
export async function decideRequestCommand(
  ctx: ClusterContext,
  name: string,
  decision: Decision,
  options: AccessDecideOptions,
): Promise<number> {
  const limit = options.wait ? timeoutMs(options.timeout) : 0;
  const what = ctx.cluster.describe(REQUEST, name);
  let request = await ctx.cluster.get<EphemeralAccessRequest>(REQUEST, name);
  say(ctx, requestSummaryLines(request, ctx.now()));
  const refuse = (problem: string) =>
    new CliError(`${what}: cannot be ${decision.toLowerCase()}: ${problem}`, EXIT.refused);
  const first = requestDecisionProblem(request, decision, ctx.now());
  if (first) throw refuse(first);
  const decider = await whoAmI(ctx.cluster, ctx.io);
  for (let attempt = 1; ; attempt++) {
    const problem = requestDecisionProblem(request, decision, ctx.now());
    if (problem) throw refuse(problem);
    const patch = requestDecisionPatch(request, decision, decider, ctx.now().toISOString(), options.message);
    try {
      request = await ctx.cluster.patchStatus<EphemeralAccessRequest>(REQUEST, name, patch);
      break;
    } catch (error) {
      if (error instanceof ApiException && error.code === 409 && attempt < 5) {
        ctx.io.stderr(
          `rolepolicy: ${what} changed while deciding (${apiMessage(error)}); reading it again\n`,
        );
        request = await ctx.cluster.get<EphemeralAccessRequest>(REQUEST, name);
        continue;
      }
      throw describeApiError(what, error);
    }
  }
  printWritten(ctx, REQUEST, request, `${decision.toLowerCase()} (decidedBy ${decider.username})`);
  if (!options.wait) return EXIT.ok;
  return waitForRequest(ctx, name, decision === 'Approved' ? ['Active'] : ['Denied'], limit);
}

/** `access list`: requests of the namespace (or all with -A), oldest first. */
export async function listAccessCommand(ctx: ClusterContext): Promise<number> {
  const requests = (await ctx.cluster.list<EphemeralAccessRequest>(REQUEST)).sort((a, b) =>
    String(a.metadata.creationTimestamp ?? '').localeCompare(String(b.metadata.creationTimestamp ?? '')),
  );
  if (ctx.output !== 'table' && ctx.output !== 'wide') {
    ctx.io.stdout(formatObjects(requests, ctx.output, resourceName(REQUEST), true));
    return EXIT.ok;
  }
  if (requests.length === 0) {
    ctx.io.stderr(`No access requests found in namespace ${ctx.cluster.namespace}.\n`);
    return EXIT.ok;
  }
  const now = ctx.now();
  const allNs = ctx.cluster.allNamespaces;
  ctx.io.stdout(
    renderTable(
      requestHeaders(allNs),
      requests.map((r) => requestRow(r, now, allNs)),
    ),
  );
  return EXIT.ok;
}
