// buildReviewArtifact: the whole review artifact v2 from the engine's plan, the snapshot and the identities.
// Pure: the caller passes captured_at, the snapshot, the plan and the facts; same input, same bytes.

import {
  applyChanges,
  canonicalJson,
  compareCodePoints,
  renderSql,
  sha256Digest,
  type CatalogSnapshot,
  type DesiredState,
  type ManagedScope,
  type PlanResult,
  type ReconciliationMode,
} from '@rolepolicy/policy';

import {
  REVIEW_ARTIFACT_SCHEMA_VERSION,
  type ArtifactManagedScope,
  type Identity,
  type Omission,
  type PhaseRecord,
  type ReviewArtifact,
  type SqlPreview,
} from './artifact.schema.js';
import {
  accessDelta,
  executorScopedEdges,
  rolesOf,
  simulateAccess,
  withCreatorEdges,
  withExecutorEdges,
  type AccessTimeline,
} from './access-simulation.js';
import { computeFindings, PRIVILEGED_PREDEFINED } from './findings.js';
import { computePreflight } from './preflight.js';
import { isSensitive, recordChanges } from './recorded-changes.js';
import type { Analysis } from './review-context.js';
import type { ReviewFacts } from './review-facts.js';
import { buildVisual } from './visual.js';

/**
 * Canonical JSON of the parts of each built artifact (context, preflight, recorded members), by identity:
 * the fingerprint and serializeReviewArtifact compose from it. Weak, so it lives as long as the artifact.
 */
const encodedParts = new WeakMap<object, string>();

/**
 * `text` itself, read once. canonicalJson builds its text by concatenation, which V8 keeps as a tree of
 * pieces until something reads the characters, and then copies it into flat storage in place. The parts of
 * an artifact are kept as long as it lives and read twice (fingerprint, serialisation): reading each once
 * here frees its tree of pieces at once, instead of leaving tens of thousands of them (a superuser's
 * membership graph in the visual) for the garbage collector to move around with the artifact.
 */
function flattened(text: string): string {
  Buffer.byteLength(text, 'utf8');
  return text;
}

/** Tag of the bytes `review_fingerprint` hashes. */
export const REVIEW_FINGERPRINT_ENCODING = 'rolepolicy.io/review-fingerprint/v1';

/** Everything an artifact is built from. Nothing here is read from a clock, a database or the environment. */
export interface ReviewInput {
  readonly toolVersion: string;
  /** Caller-supplied RFC 3339 timestamp. */
  readonly capturedAt: string;
  /** `sha256:` content digest of the policy content (libs/policy contentDigest). */
  readonly contentDigest: string;
  readonly commit?: string | null;
  /** Human-readable target name; a connection URL is refused. */
  readonly targetLabel: string;
  /** Names the policy document in each change's `source` (e.g. `PostgresPolicy/ns/name` or a file name). */
  readonly document: string;
  readonly mode: ReconciliationMode;
  readonly desired: DesiredState;
  readonly scope: ManagedScope;
  readonly snapshot: CatalogSnapshot;
  readonly plan: Pick<PlanResult, 'changes' | 'phases'>;
  /** The role that will execute; defaults to the inspecting role (`snapshot.executor`). */
  readonly intendedExecutor?: Identity;
  /** Catalog facts for the preflight; null when reviewing offline (checks become not_run / unknown). */
  readonly facts: ReviewFacts | null;
}

/** Bad input to the builder: the message names the field and the rule. */
export class ReviewInputError extends Error {
  override readonly name = 'ReviewInputError';
}

const RFC3339 =
  /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[Tt]([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)$/;
const URL_LIKE = /^[a-z][a-z0-9+.-]*:\/\/|[^\s@/]+:[^\s@/]*@|\bpassword=/i;

function validate(input: ReviewInput): void {
  if (!RFC3339.test(input.capturedAt)) {
    throw new ReviewInputError(
      `provenance.captured_at must be an RFC 3339 timestamp (e.g. 2026-11-25T12:00:00Z), got "${input.capturedAt}"`,
    );
  }
  if (input.targetLabel.trim() === '')
    throw new ReviewInputError('provenance.target_label must not be empty');
  if (URL_LIKE.test(input.targetLabel)) {
    throw new ReviewInputError(
      'provenance.target_label must be a human-readable label, never a connection URL',
    );
  }
  if (!/^sha256:[0-9a-f]{64}$/.test(input.contentDigest)) {
    throw new ReviewInputError('provenance.policy.content_digest must be sha256: followed by 64 hex digits');
  }
}

/** context.managed_scope: roles, and schemas with whether the policy owns them and binds profiles in them. */
function artifactScope(desired: DesiredState, scope: ManagedScope): ArtifactManagedScope {
  const owned = new Set(scope.owned_schemas);
  const bound = new Set(desired.schemas.map((s) => s.name));
  return {
    roles: [...scope.roles],
    schemas: [...scope.schemas]
      .sort(compareCodePoints)
      .map((name) => ({ name, owner: owned.has(name), bindings: bound.has(name) })),
  };
}

function sqlPreview(input: ReviewInput): SqlPreview {
  const sensitive = input.plan.changes.flatMap((c, i) => (isSensitive(c) ? [i] : []));
  if (sensitive.length > 0) {
    return { status: 'omitted', reason: 'sensitive_changes', sensitive_change_indices: sensitive };
  }
  const rendered = renderSql(input.plan.changes, {
    serverVersionNum: input.snapshot.server_version_num,
    inventory: input.snapshot.inventory,
    passwords: {},
    executorRole: input.snapshot.executor.role,
  });
  return { status: 'available', sql: rendered.redactedSql };
}

/** Per phase: its changes and what the executor gains or loses through it. */
function phaseRecords(phases: ReviewInput['plan']['phases'], timeline: AccessTimeline): PhaseRecord[] {
  const empty = new Map();
  return phases.map((phase, p) => {
    const previous = p === 0 ? null : timeline.afterPhase[p - 1]!;
    const next = timeline.afterPhase[p]!;
    return {
      phase: phase.phase,
      change_indices: [...phase.change_indices],
      executor_reachability_delta: accessDelta(previous?.reachability ?? empty, next.reachability),
      executor_usage_delta: accessDelta(previous?.usage ?? empty, next.usage),
    };
  });
}

/**
 * The state after the whole plan, for the graph. A wildcard grant stays one `*` target: every inventory
 * scope gets a single `*` object, instead of one grant per table (tens of thousands at the spec's bounds).
 */
function graphState(
  simulated: CatalogSnapshot,
  changes: ReviewInput['plan']['changes'],
  executor: Identity,
): CatalogSnapshot {
  const scopes = new Map(
    simulated.inventory.map((o) => [`${o.kind}\u0000${o.schema}`, { ...o, name: '*', owner: '' }]),
  );
  return withCreatorEdges(
    applyChanges({ ...simulated, inventory: [...scopes.values()] }, changes),
    changes,
    executor,
  );
}

/** What the artifact leaves out because it could carry a secret. */
function omissionsOf(sqlPreview: SqlPreview, after: CatalogSnapshot): Omission[] {
  return [
    ...(sqlPreview.status === 'omitted'
      ? [{ field: 'sql_preview.sql', reason: 'sensitive_value' as const }]
      : []),
    ...(after.roles.some((r) => r.state.comment !== null)
      ? [{ field: 'visual.nodes.comment', reason: 'sensitive_value' as const }]
      : []),
    ...(after.roles.some((r) => Object.keys(r.state.config).length > 0)
      ? [{ field: 'visual.nodes.config', reason: 'sensitive_value' as const }]
      : []),
  ];
}

/**
 * The snapshot plus the facts' edges that decide something: those on the inspecting role's way up to a
 * tracked or privileged predefined role (ADR 0028); the rest would only name other tenants' roles.
 */
function withScopedFacts(
  snapshot: CatalogSnapshot,
  facts: ReviewFacts | null,
  tracked: readonly string[],
): CatalogSnapshot {
  const targets = new Set([...tracked, ...PRIVILEGED_PREDEFINED]);
  const edges = facts?.executor_memberships ?? [];
  return withExecutorEdges(snapshot, executorScopedEdges(snapshot, snapshot.executor.role, edges, targets));
}

/**
 * Builds the review artifact. Throws ReviewInputError on a malformed timestamp, digest or a URL as label.
 * @example `const artifact = buildReviewArtifact({ toolVersion: '0.1.0', capturedAt: '2026-11-25T12:00:00Z', ... });`
 */
export function buildReviewArtifact(input: ReviewInput): ReviewArtifact {
  validate(input);
  const { snapshot, desired, scope, plan } = input;
  const inspector: Identity = { role: snapshot.executor.role, superuser: snapshot.executor.superuser };
  const executor: Identity = input.intendedExecutor ?? inspector;
  const sameActor = executor.role === inspector.role;
  const complete = input.facts !== null && sameActor;
  const pgMajor = Math.floor(snapshot.server_version_num / 10000);

  const tracked = [...new Set([...scope.roles, ...plan.changes.flatMap(rolesOf), executor.role])].sort(
    compareCodePoints,
  );
  const simulated = withScopedFacts(snapshot, input.facts, tracked);
  // Access depends on roles and memberships only: simulate phases on that slice (grants, defaults and the
  // wildcard inventory would make every phase copy the whole catalog), and the whole plan once for the graph.
  const roleSlice = { ...simulated, grants: [], default_privileges: [], inventory: [], schemas: [] };
  const timeline = simulateAccess(roleSlice, plan.changes, plan.phases, tracked, executor, complete);
  const analysis: Analysis = {
    changes: plan.changes,
    phases: plan.phases,
    desired,
    scope,
    snapshot: simulated,
    facts: input.facts,
    executor,
    executorCreaterole: sameActor ? snapshot.executor.createrole : null,
    timeline,
    pgMajor,
  };
  const findings = computeFindings(analysis);
  const preflight = computePreflight(analysis, findings);

  const phases = phaseRecords(plan.phases, timeline);

  const managedScope = artifactScope(desired, scope);
  const after = graphState(simulated, plan.changes, executor);
  const visual = buildVisual(after, simulated, desired, managedScope);
  const changes = recordChanges(plan.changes, desired, input.document);
  const sql_preview = sqlPreview(input);
  const omissions = omissionsOf(sql_preview, after);
  const removedAnything = omissions.length > 0 || changes.some((c) => (c.omissions ?? []).length > 0);

  const provenance = {
    tool_version: input.toolVersion,
    captured_at: input.capturedAt,
    policy: {
      content_digest: input.contentDigest,
      ...(input.commit !== undefined ? { commit: input.commit } : {}),
    },
    target_label: input.targetLabel,
    pg_major_version: pgMajor,
  };
  const context = {
    mode: input.mode,
    inspector,
    intended_executor: executor,
    authority_graph_complete: complete,
    managed_scope: managedScope,
  };
  const recordedBody = {
    changes,
    phases,
    findings,
    ...(omissions.length > 0 ? { omissions } : {}),
    visual,
    sql_preview,
  };
  // The fingerprint document and the artifact share context, preflight and every recorded member: encode
  // each once, and let both documents (and serializeReviewArtifact later) reuse the bytes.
  for (const part of [context, preflight, ...Object.values(recordedBody)]) {
    if (typeof part === 'object' && part !== null) encodedParts.set(part, flattened(canonicalJson(part)));
  }
  // What a reviewer approves: everything except when and with which tool it was captured.
  const review_fingerprint = sha256Digest(
    canonicalJson(
      {
        encoding: REVIEW_FINGERPRINT_ENCODING,
        content_digest: input.contentDigest,
        target_label: input.targetLabel,
        pg_major_version: pgMajor,
        context,
        preflight,
        recorded: recordedBody,
      },
      encodedParts,
    ),
  );
  return {
    schema_version: REVIEW_ARTIFACT_SCHEMA_VERSION,
    provenance,
    context,
    preflight,
    recorded: { ...recordedBody, review_fingerprint },
    exploration: {
      status: 'omitted',
      reason: removedAnything ? 'sensitive_inputs_removed' : 'recorded_only_export',
    },
  };
}

/**
 * The artifact as canonical JSON (keys sorted by code point at every level): byte-identical for equal input.
 * Parts the builder already encoded for the fingerprint are reused, not encoded again; an artifact is a value
 * (nothing changes it after buildReviewArtifact returns), and a copy with replaced parts encodes those afresh.
 */
export function serializeReviewArtifact(artifact: ReviewArtifact): string {
  return canonicalJson(artifact, encodedParts);
}

/** Canonical JSON, indented for people and diffs (same key order as serializeReviewArtifact). */
export function formatReviewArtifactJson(artifact: ReviewArtifact): string {
  return `${JSON.stringify(JSON.parse(serializeReviewArtifact(artifact)), null, 2)}\n`;
}
