// `npm run bench -- policy`: expansion + plan computation (+ SQL rendering and change digest) at 1/4, 1/2 and
// full spec bounds against 1,000 schemas x 50 relations; ms and peak memory per size -> bench/results/policy.json.

import { mkdirSync, writeFileSync } from 'node:fs';
import { resourceUsage } from 'node:process';
import { fileURLToPath } from 'node:url';
import { changeDigest, computePlan, expandPolicy, renderSql } from '@rolepolicy/policy';
import { policyAt, snapshotAt } from './policy-fixture.js';
import { median, sampleInChild, timed } from './timing.js';

/** One measured size. Times are the median of the timed runs, in milliseconds. */
export interface PolicyBenchSample {
  readonly fraction: number;
  readonly changes: number;
  readonly statements: number;
  readonly expandMs: number;
  readonly planMs: number;
  readonly renderMs: number;
  readonly digestMs: number;
  readonly totalMs: number;
  readonly peakRssMb: number;
}

const FRACTIONS = [0.25, 0.5, 1];
const RUNS = 5;
const TARGET_MS = 1000;

/** Measures one size in this process (run in a child per size so peak RSS belongs to that size alone). */
export function measure(fraction: number): PolicyBenchSample {
  const content = policyAt(fraction);
  const snapshot = snapshotAt(fraction);
  const samples: {
    expand: number;
    plan: number;
    render: number;
    digest: number;
    changes: number;
    statements: number;
  }[] = [];
  for (let run = 0; run <= RUNS; run++) {
    const expanded = timed(() => expandPolicy(content, { policyName: 'bench' }));
    if (!expanded.value.ok) {
      throw new Error(`bench policy is invalid: ${JSON.stringify(expanded.value.errors.slice(0, 5))}`);
    }
    const desired = expanded.value.desired;
    const plan = timed(() =>
      computePlan({
        desired,
        snapshot,
        mode: 'authoritative',
        passwordSources: {},
        appliedPasswordSourceVersions: {},
        allowSchemaOwnerTransfers: false,
      }),
    );
    const rendered = timed(() =>
      renderSql(plan.value.changes, {
        serverVersionNum: snapshot.server_version_num,
        inventory: snapshot.inventory,
        passwords: {},
      }),
    );
    const digest = timed(() =>
      changeDigest({
        mode: 'authoritative',
        target: 'bench/pg/url',
        targetPhysicalIdentity: snapshot.identity.physical,
        targetLogicalFingerprint: null,
        ownedRoles: desired.roles.map((r) => r.name),
        ownedSchemas: desired.schemas.map((s) => s.name),
        changes: plan.value.changes,
      }),
    );
    // The first run warms the JIT and is not counted.
    if (run > 0) {
      samples.push({
        expand: expanded.ms,
        plan: plan.ms,
        render: rendered.ms,
        digest: digest.ms,
        changes: plan.value.changes.length,
        statements: rendered.value.statementCount,
      });
    }
  }
  const expandMs = median(samples.map((s) => s.expand));
  const planMs = median(samples.map((s) => s.plan));
  const renderMs = median(samples.map((s) => s.render));
  const digestMs = median(samples.map((s) => s.digest));
  return {
    fraction,
    changes: samples[0]!.changes,
    statements: samples[0]!.statements,
    expandMs: round(expandMs),
    planMs: round(planMs),
    renderMs: round(renderMs),
    digestMs: round(digestMs),
    totalMs: round(expandMs + planMs + renderMs + digestMs),
    // maxRSS is in kilobytes on Linux.
    peakRssMb: round(resourceUsage().maxRSS / 1024),
  };
}

const round = (n: number): number => Math.round(n * 10) / 10;

/** Runs every size in its own child process, prints a table and writes bench/results/policy.json. */
export function runPolicyBench(script: string, args: readonly string[]): void {
  const childFraction = args.indexOf('--fraction');
  if (childFraction >= 0) {
    process.stdout.write(`${JSON.stringify(measure(Number(args[childFraction + 1])))}\n`);
    return;
  }
  const results = FRACTIONS.map((fraction) => sampleInChild<PolicyBenchSample>(script, 'policy', fraction));
  console.table(results);
  const full = results[results.length - 1]!;
  const quarter = results[0]!;
  const report = {
    benchmark: 'policy',
    description:
      'expandPolicy + computePlan (+ renderSql, changeDigest) at 1/4, 1/2 and full spec bounds ' +
      '(1024 roles, 4096 grants, 2048 memberships, 512 default privileges, 1024 schemas) against 1,000 schemas x 50 relations',
    node: process.version,
    runs: RUNS,
    targetPlanMs: TARGET_MS,
    planUnderTarget: full.expandMs + full.planMs < TARGET_MS,
    // Linear growth: full size should cost about 4x the quarter size (well under 16x, which would be quadratic).
    planGrowthFullOverQuarter: round(
      (full.expandMs + full.planMs) / Math.max(quarter.expandMs + quarter.planMs, 0.1),
    ),
    results,
  };
  const dir = fileURLToPath(new URL('../../bench/results/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}policy.json`, `${JSON.stringify(report, null, 2)}\n`);
  console.log(
    `plan (expand + computePlan) at full size: ${round(full.expandMs + full.planMs)} ms (target < ${TARGET_MS} ms); ` +
      `growth full/quarter: ${report.planGrowthFullOverQuarter}x; results in bench/results/policy.json`,
  );
}
