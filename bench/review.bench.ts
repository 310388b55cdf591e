// `npm run bench -- review`: review-artifact generation (buildReviewArtifact + canonical JSON, and the HTML
// report separately) for the full-bounds policy on the 1,000-schema catalog, on top of expansion and
// planning; median ms and memory per size -> bench/results/review.json. Goal: artifact < 1 s over planning.
// `npm run bench -- review --fleet`: the same for one fleet policy (bench/fleet-policy.ts) on its fresh
// database, per artifact, beside the canonical JSON encoder before the sixth session -> review-fleet.json.

import { mkdirSync, writeFileSync } from 'node:fs';
import { resourceUsage } from 'node:process';
import { fileURLToPath } from 'node:url';

import {
  canonicalJson,
  computePlan,
  contentDigest,
  deriveManagedScope,
  expandPolicy,
  type PolicyContent,
} from '@rolepolicy/policy';
import { buildReviewArtifact, renderReviewHtml, serializeReviewArtifact } from '@rolepolicy/review';

import { freshFleetSnapshot, smallPolicy } from './fleet-policy.js';
import { legacyCanonicalJson } from './legacy-hot-paths.js';
import { writeResult } from './pg-bench-support.js';
import { policyAt, snapshotAt } from './policy-fixture.js';
import { compareCpuPerCall, median, sampleInChild, timed } from './timing.js';

/** One measured size; times are medians of the timed runs in milliseconds. */
export interface ReviewBenchSample {
  readonly fraction: number;
  readonly changes: number;
  readonly findings: number;
  readonly graphNodes: number;
  readonly artifactBytes: number;
  readonly planMs: number;
  readonly artifactMs: number;
  /** The same with a CREATEROLE non-superuser executor (every authority check and access status computed). */
  readonly artifactNonSuperuserMs: number;
  readonly nonSuperuserFindings: number;
  readonly serializeMs: number;
  readonly htmlMs: number;
  readonly htmlBytes: number;
  readonly heapUsedMb: number;
  readonly peakRssMb: number;
}

const FRACTIONS = [0.25, 0.5, 1];
const RUNS = 3;
const TARGET_MS = 1000;

const round = (n: number): number => Math.round(n * 10) / 10;

/** Measures one size in this process (one child per size, so peak RSS belongs to that size). */
export function measure(fraction: number): ReviewBenchSample {
  const content = policyAt(fraction);
  const snapshot = snapshotAt(fraction);
  const restricted = {
    ...snapshot,
    executor: { role: 'rolepolicy_executor', superuser: false, createrole: true, member_of: ['app_owner'] },
  };
  const restrictedFacts = {
    executor_memberships: [
      { role: 'app_owner', member: 'rolepolicy_executor', inherit: true, admin: false, grantor: null },
    ],
    drop_roles: [],
    predefined_roles: [],
  };
  const rows: { plan: number; artifact: number; restricted: number; serialize: number; html: number }[] = [];
  let last: {
    changes: number;
    findings: number;
    restrictedFindings: number;
    nodes: number;
    bytes: number;
    htmlBytes: number;
  } | null = null;
  let heapUsedMb = 0;
  for (let run = 0; run <= RUNS; run++) {
    const planned = timed(() => {
      const expansion = expandPolicy(content, { policyName: 'bench' });
      if (!expansion.ok) throw new Error('bench policy is invalid');
      const desired = expansion.desired;
      const plan = computePlan({
        desired,
        snapshot,
        mode: 'authoritative',
        passwordSources: {},
        appliedPasswordSourceVersions: {},
        allowSchemaOwnerTransfers: false,
      });
      return { desired, plan };
    });
    const { desired, plan } = planned.value;
    const heapBefore = process.memoryUsage().heapUsed;
    const artifact = timed(() =>
      buildReviewArtifact({
        toolVersion: 'bench',
        capturedAt: '2026-11-25T12:00:00Z',
        contentDigest: contentDigest(content).digest,
        targetLabel: 'bench',
        document: 'bench.yaml',
        mode: 'authoritative',
        desired,
        scope: deriveManagedScope(desired),
        snapshot,
        plan,
        facts: { executor_memberships: [], drop_roles: [], predefined_roles: [] },
      }),
    );
    heapUsedMb = Math.max(heapUsedMb, (process.memoryUsage().heapUsed - heapBefore) / 1024 / 1024);
    const restrictedArtifact = timed(() =>
      buildReviewArtifact({
        toolVersion: 'bench',
        capturedAt: '2026-11-25T12:00:00Z',
        contentDigest: contentDigest(content).digest,
        targetLabel: 'bench',
        document: 'bench.yaml',
        mode: 'authoritative',
        desired,
        scope: deriveManagedScope(desired),
        snapshot: restricted,
        plan,
        facts: restrictedFacts,
      }),
    );
    const serialized = timed(() => serializeReviewArtifact(artifact.value));
    const html = timed(() => renderReviewHtml(artifact.value));
    last = {
      changes: plan.changes.length,
      findings: artifact.value.recorded.findings.length,
      restrictedFindings: restrictedArtifact.value.recorded.findings.length,
      nodes: artifact.value.recorded.visual.nodes.length,
      bytes: Buffer.byteLength(serialized.value),
      htmlBytes: Buffer.byteLength(html.value),
    };
    // The first run warms the JIT and is not counted.
    if (run > 0) {
      const restrictedMs = restrictedArtifact.ms;
      rows.push({
        plan: planned.ms,
        artifact: artifact.ms,
        restricted: restrictedMs,
        serialize: serialized.ms,
        html: html.ms,
      });
    }
  }
  return {
    fraction,
    changes: last!.changes,
    findings: last!.findings,
    graphNodes: last!.nodes,
    artifactBytes: last!.bytes,
    planMs: round(median(rows.map((r) => r.plan))),
    artifactMs: round(median(rows.map((r) => r.artifact))),
    artifactNonSuperuserMs: round(median(rows.map((r) => r.restricted))),
    nonSuperuserFindings: last!.restrictedFindings,
    serializeMs: round(median(rows.map((r) => r.serialize))),
    htmlMs: round(median(rows.map((r) => r.html))),
    htmlBytes: last!.htmlBytes,
    // Heap growth across one buildReviewArtifact call (after it returns; GC may run inside).
    heapUsedMb: round(heapUsedMb),
    // maxRSS is in kilobytes on Linux.
    peakRssMb: round(resourceUsage().maxRSS / 1024),
  };
}

const FLEET_ROUNDS = 30;
const FLEET_PER_ROUND = 50;
/**
 * One fleet policy's artifact, as the planner records it for the policy's first plan: build, serialize, and
 * the canonical JSON of the same artifact by today's encoder and by the one before the sixth session.
 */
export function measureFleetArtifact(): Record<string, unknown> {
  const content = smallPolicy('fleet_', 'fleet_db', 'fleet-secret') as unknown as PolicyContent;
  const expansion = expandPolicy(content, { policyName: 'fleet' });
  if (!expansion.ok) throw new Error('the fleet policy does not expand');
  const desired = expansion.desired;
  const snapshot = freshFleetSnapshot('fleet_db');
  const plan = computePlan({
    desired,
    snapshot,
    mode: 'authoritative',
    passwordSources: {},
    appliedPasswordSourceVersions: {},
    allowSchemaOwnerTransfers: false,
  });
  const input = {
    toolVersion: 'bench',
    capturedAt: '2026-11-25T12:00:00Z',
    contentDigest: contentDigest(content).digest,
    targetLabel: 'fleet_db',
    document: 'PostgresPolicy/bench/fleet',
    mode: 'authoritative' as const,
    desired,
    scope: deriveManagedScope(desired),
    snapshot,
    plan,
    facts: { executor_memberships: [], drop_roles: [], predefined_roles: [] },
  };
  const artifact = buildReviewArtifact(input);
  const text = serializeReviewArtifact(artifact);
  if (canonicalJson(JSON.parse(text)) !== text || legacyCanonicalJson(artifact) !== text) {
    throw new Error('the encoders disagree on the fleet artifact');
  }
  const parsed: unknown = JSON.parse(text);
  // CPU time of this process, so the other processes of a loaded machine do not count.
  const us = compareCpuPerCall(
    {
      build: () => buildReviewArtifact(input),
      buildAndSerialize: () => serializeReviewArtifact(buildReviewArtifact(input)),
      canonicalJson: () => canonicalJson(parsed),
      legacyCanonicalJson: () => legacyCanonicalJson(parsed),
    },
    FLEET_ROUNDS,
    FLEET_PER_ROUND,
  );
  return {
    changes: plan.changes.length,
    artifactBytes: Buffer.byteLength(text),
    rounds: FLEET_ROUNDS,
    callsPerRound: FLEET_PER_ROUND,
    buildUs: us['build'],
    buildAndSerializeUs: us['buildAndSerialize'],
    canonicalJsonUs: us['canonicalJson'],
    legacyCanonicalJsonUs: us['legacyCanonicalJson'],
  };
}

/** Runs each size in a child process (`--fractions 0.25,0.5` to reduce), prints a table, writes review.json. */
export function runReviewBench(script: string, args: readonly string[]): void {
  if (args.includes('--fleet')) {
    const sample = measureFleetArtifact();
    console.table([sample]);
    writeResult('review-fleet', {
      benchmark: 'review --fleet',
      description:
        "One fleet policy's review artifact (bench/fleet-policy.ts: 2 profiles x 2 schemas, 2 roles, memberships, " +
        'on a fresh database): median CPU microseconds per buildReviewArtifact, per build + serializeReviewArtifact, and per ' +
        'canonicalJson of the same artifact (parsed back, so no encoding is reused) by the encoder before the ' +
        'sixth session (legacy) and today',
      node: process.version,
      ...sample,
    });
    return;
  }
  const child = args.indexOf('--fraction');
  if (child >= 0) {
    process.stdout.write(`${JSON.stringify(measure(Number(args[child + 1])))}\n`);
    return;
  }
  const listed = args.indexOf('--fractions');
  const fractions = listed >= 0 ? args[listed + 1]!.split(',').map(Number) : FRACTIONS;
  const results = fractions.map((fraction) => sampleInChild<ReviewBenchSample>(script, 'review', fraction));
  console.table(results);
  const largest = results[results.length - 1]!;
  const report = {
    benchmark: 'review',
    description:
      'buildReviewArtifact (+ canonical JSON; HTML report measured separately) on top of expandPolicy + computePlan, ' +
      'for the policy benchmark input at 1/4, 1/2 and full spec bounds against 1,000 schemas x 50 relations',
    node: process.version,
    runs: RUNS,
    targetArtifactMs: TARGET_MS,
    largestFraction: largest.fraction,
    artifactUnderTarget:
      Math.max(largest.artifactMs, largest.artifactNonSuperuserMs) + largest.serializeMs < TARGET_MS,
    results,
  };
  const dir = fileURLToPath(new URL('../../bench/results/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}review.json`, `${JSON.stringify(report, null, 2)}\n`);
  console.log(
    `artifact at fraction ${largest.fraction}: ${round(largest.artifactMs + largest.serializeMs)} ms on top of ` +
      `${largest.planMs} ms planning (target < ${TARGET_MS} ms); HTML ${largest.htmlMs} ms; results in bench/results/review.json`,
  );
}
