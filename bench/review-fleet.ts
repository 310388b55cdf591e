// `npm run bench -- review --fleet`: what recording one fleet policy's first plan costs the planner, in CPU
// microseconds of this process per plan (median of interleaved rounds), in two settings of the same policy:
// a fresh server, and a superuser executor on a server shared with `--server-policies` other fleet policies
// (default 500), given the facts its read returned before ADR 0028 (every membership of the server): the
// artifact keeps none of them (none is on the executor's way up to a role the plan tracks).
// Same run: the planner's recording as it was before the eighth session (computePlan again, the tool version
// read from package.json, the content digest again) and the floor, the canonical JSON of the same artifact
// from a structural copy (no reuse): the least a recorder must do to produce the bytes.

import { gzipSync } from 'node:zlib';

import {
  canonicalJson,
  computePlan,
  contentDigest,
  deriveManagedScope,
  expandPolicy,
  type MembershipEdge,
  type PlanInput,
  type PolicyContent,
} from '@rolepolicy/policy';
import { buildReviewConfigMap, type PostgresPolicyPlan } from '@rolepolicy/plan-lifecycle';
import {
  buildReviewArtifact,
  serializeReviewArtifact,
  toolVersion,
  type ReviewInput,
} from '@rolepolicy/review';

import { freshFleetSnapshot, smallPolicy } from './fleet-policy.js';
import { legacyCanonicalJson } from './legacy-hot-paths.js';
import { compareCpuPerCall } from './timing.js';

/** The plan object recordPlan annotates (only its name, namespace and computedAt are read). */
const PLAN = {
  metadata: { namespace: 'bench', name: 'fleet-7f3a2c1' },
  status: { computedAt: '2026-11-25T12:00:00Z' },
} as unknown as PostgresPolicyPlan;

/**
 * Every membership of a server holding `others` fleet policies besides ours, as `readReviewFacts` returned
 * them for a superuser before ADR 0028 (pg_has_role(superuser, any, MEMBER) holds): two per policy, ordered as
 * the query did. Now the read returns the superuser's own memberships (none), and the library drops these.
 */
export function serverWideEdges(others: number): MembershipEdge[] {
  const edges: MembershipEdge[] = [];
  for (let k = 0; k < others; k++) {
    const p = `e2_f${k}_`;
    edges.push(
      { role: `${p}billing_viewer`, member: `${p}reporting`, inherit: true, admin: false, grantor: null },
      { role: `${p}orders_editor`, member: `${p}app`, inherit: true, admin: false, grantor: null },
    );
  }
  return edges.sort((a, b) => (a.role < b.role ? -1 : a.role > b.role ? 1 : a.member < b.member ? -1 : 1));
}

/** The fleet policy's planning and review inputs with `edges` as the executor's review facts. */
function fleetInputs(edges: readonly MembershipEdge[]): {
  content: PolicyContent;
  planInput: PlanInput;
  review: ReviewInput;
} {
  const content = smallPolicy('fleet_', 'fleet_db', 'fleet-secret') as unknown as PolicyContent;
  const expansion = expandPolicy(content, { policyName: 'fleet' });
  if (!expansion.ok) throw new Error('the fleet policy does not expand');
  const desired = expansion.desired;
  const snapshot = freshFleetSnapshot('fleet_db');
  const planInput: PlanInput = {
    desired,
    snapshot,
    mode: desired.reconciliation_mode,
    passwordSources: {},
    appliedPasswordSourceVersions: {},
    allowSchemaOwnerTransfers: false,
  };
  const review: ReviewInput = {
    toolVersion: toolVersion(),
    capturedAt: '2026-11-25T12:00:00Z',
    contentDigest: contentDigest(content).digest,
    targetLabel: 'bench/fleet',
    document: 'PostgresPolicy/bench/fleet',
    mode: desired.reconciliation_mode,
    desired,
    scope: deriveManagedScope(desired),
    snapshot,
    plan: computePlan(planInput),
    facts: { executor_memberships: [...edges], drop_roles: [], predefined_roles: [] },
  };
  return { content, planInput, review };
}

/** One setting: the artifact's size and the CPU per call of each variant. */
function measureSetting(edges: readonly MembershipEdge[], rounds: number, perRound: number) {
  const { content, planInput, review } = fleetInputs(edges);
  const record = (input: ReviewInput) =>
    buildReviewConfigMap(PLAN, serializeReviewArtifact(buildReviewArtifact(input)));
  const text = serializeReviewArtifact(buildReviewArtifact(review));
  const copy: unknown = JSON.parse(text);
  if (canonicalJson(copy) !== text || legacyCanonicalJson(copy) !== text) {
    throw new Error('the encoders disagree on the fleet artifact');
  }
  const us = compareCpuPerCall(
    {
      // recordPlan before the eighth session: the plan computed again, the version read, the spec digested.
      plannerRecordBefore: () =>
        record({
          ...review,
          toolVersion: toolVersion(),
          contentDigest: contentDigest(content).digest,
          plan: computePlan(planInput),
        }),
      plannerRecord: () => record(review),
      build: () => buildReviewArtifact(review),
      computePlan: () => computePlan(planInput),
      floorCanonicalJson: () => canonicalJson(copy),
      legacyCanonicalJson: () => legacyCanonicalJson(copy),
    },
    rounds,
    perRound,
  );
  const bytes = Buffer.byteLength(text);
  return {
    executorEdges: edges.length,
    changes: review.plan.changes.length,
    artifactBytes: bytes,
    stored: bytes <= 16 * 1024 ? 'json' : `gzip (${gzipSync(text, { level: 4 }).length} bytes)`,
    plannerRecordBeforeUs: us['plannerRecordBefore'],
    plannerRecordUs: us['plannerRecord'],
    buildUs: us['build'],
    computePlanUs: us['computePlan'],
    floorCanonicalJsonUs: us['floorCanonicalJson'],
    legacyCanonicalJsonUs: us['legacyCanonicalJson'],
    recordToFloor: Math.round((us['plannerRecord']! / us['floorCanonicalJson']!) * 10) / 10,
    recordBeforeToFloor: Math.round((us['plannerRecordBefore']! / us['floorCanonicalJson']!) * 10) / 10,
  };
}

/** Both settings (`--server-policies N`: the other policies of the shared server). */
export function measureFleetRecording(args: readonly string[]): Record<string, unknown> {
  const at = args.indexOf('--server-policies');
  const others = at >= 0 ? Number(args[at + 1]) : 500;
  return {
    freshServer: measureSetting([], 30, 50),
    sharedServer: { otherPolicies: others, ...measureSetting(serverWideEdges(others), 15, 4) },
  };
}
