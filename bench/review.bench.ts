// `npm run bench -- review`: review-artifact generation (buildReviewArtifact + canonical JSON, and the HTML
// report separately) for the full-bounds policy on the 1,000-schema catalog, on top of expansion and
// planning; median ms and memory per size -> bench/results/review.json. Goal: artifact < 1 s over planning.
// `npm run bench -- review --fleet`: recording one fleet policy's first plan as the planner does, on a fresh
// and on a shared server (bench/review-fleet.ts) -> review-fleet.json.

import { mkdirSync, writeFileSync } from 'node:fs';
import { resourceUsage } from 'node:process';
import { fileURLToPath } from 'node:url';

import { computePlan, contentDigest, deriveManagedScope, expandPolicy } from '@rolepolicy/policy';
import { buildReviewArtifact, renderReviewHtml, serializeReviewArtifact } from '@rolepolicy/review';

import { writeResult } from './pg-bench-support.js';
import { measureFleetRecording } from './review-fleet.js';
import { policyAt, snapshotAt } from './policy-fixture.js';
import { median, sampleInChild, timed } from './timing.js';

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

/** Runs each size in a child process (`--fractions 0.25,0.5` to reduce), prints a table, writes review.json. */
export function runReviewBench(script: string, args: readonly string[]): void {
  if (args.includes('--fleet')) {
    const sample = measureFleetRecording(args);
    console.table(sample);
    writeResult('review-fleet', {
      benchmark: 'review --fleet',
      description:
        "Recording one fleet policy's first plan in the planner (bench/fleet-policy.ts: 2 profiles x 2 schemas, " +
        '2 roles, memberships; bench/review-fleet.ts), CPU microseconds of the bench process per plan, median of ' +
        'interleaved rounds: on a fresh server, and with a superuser executor on a server shared with other fleet ' +
        "policies, given the review facts a superuser's read returned before ADR 0028 (every membership of the " +
        "server; the artifact keeps only the edges on the executor's way up to the roles it tracks: none here). " +
        'plannerRecord: build + serialize + the review ConfigMap, as recordPlan runs it;' +
        " plannerRecordBefore: recordPlan's steps before the eighth session (computePlan again, " +
        'tool version read, content digested) on the same library; floorCanonicalJson: canonical JSON of the same ' +
        'artifact from a structural copy; legacyCanonicalJson: the encoder before the sixth session',
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
