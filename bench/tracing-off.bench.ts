// `npm run bench -- tracing-off`: what tracing costs when it is off (issue 30: "tracing off costs nothing
// measurable"). With no OTEL_* variable the SDK is never loaded, so what a service still runs is the hooks
// the tracing code left on its paths: `inSpan` around passes and steps, and the header helpers on every
// message published or consumed. Each hook is timed against its floor, the code a build without tracing
// would run in its place (calling the function directly, passing the headers through), in alternating
// rounds in this process. The per-policy bound multiplies the worst hook's extra cost by an upper bound of
// hook calls per policy taken from the fleet runs in bench/results/ (spans per policy with tracing on: one
// per `inSpan` call; messages per policy: at most HOOKS_PER_MESSAGE header hooks each, sent and received)
// and compares it with the services' CPU per policy of the same runs.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { carrierOf, contextFromHeaders, inSpan, traceHeaders, tracingActive } from '@rolepolicy/contracts';
import { ROOT_CONTEXT } from '@opentelemetry/api';
import { headers as natsHeaders } from '@nats-io/transport-node';

import { writeResult } from './pg-bench-support.js';
import { compareCpuPerCall } from './timing.js';

const ROUNDS = 20;
const PER_ROUND = 200_000;
// Header hooks one message can meet: traceHeaders when sent, contextFromHeaders and carrierOf when
// received, and the gateway's links (trace-links.ts); 5 is above what any path calls.
const HOOKS_PER_MESSAGE = 5;

type FleetResult = {
  readonly databases: number;
  readonly perPolicy: Record<string, { readonly messagesHandled: number }>;
  readonly cpuSeconds: Record<string, Record<string, number>>;
  readonly spansPerPolicy?: number;
};

/** The five services' CPU per policy of a fleet run (PostgreSQL, the bench and the total left out). */
function serviceCpuMsPerPolicy(run: FleetResult, stage: string): number {
  const services = Object.entries(run.cpuSeconds[stage] ?? {}).filter(
    ([name]) => !['postgres', 'total'].includes(name) && !name.startsWith('bench'),
  );
  return (services.reduce((sum, [, s]) => sum + s, 0) * 1000) / run.databases;
}

function fleetResult(name: string): FleetResult {
  const file = fileURLToPath(new URL(`../../bench/results/${name}.json`, import.meta.url));
  return JSON.parse(readFileSync(file, 'utf8')) as FleetResult;
}

/** Nanoseconds per call from compareCpuPerCall's microseconds (it rounds to 0.1 µs: time ten calls). */
function nsPerCall(variants: Readonly<Record<string, () => unknown>>): Record<string, number> {
  const tenfold = Object.fromEntries(
    Object.entries(variants).map(([name, fn]) => [
      name,
      () => {
        for (let i = 0; i < 10; i++) fn();
      },
    ]),
  );
  const us = compareCpuPerCall(tenfold, ROUNDS, PER_ROUND / 10);
  return Object.fromEntries(Object.entries(us).map(([k, v]) => [k, Math.round(v * 100)]));
}

/** Prints and writes the figures. */
export function runTracingOffBench(): void {
  if (tracingActive()) throw new Error('tracing is on in the bench process: unset the OTEL_* variables');
  const done = Promise.resolve(1);
  const body = (): Promise<number> => done;
  const received = natsHeaders();
  received.set('nats-msg-id', 'k8s-cmd-1');
  let sink: unknown;
  const hooks = {
    inSpan: nsPerCall({
      off: () => (sink = inSpan('planner pass', { attributes: { 'rolepolicy.name': 'db-1' } }, body)),
      floor: () => (sink = body()),
    }),
    traceHeaders: nsPerCall({ off: () => (sink = traceHeaders()), floor: () => (sink = undefined) }),
    contextFromHeaders: nsPerCall({
      off: () => (sink = contextFromHeaders(received)),
      floor: () => (sink = ROOT_CONTEXT),
    }),
    carrierOf: nsPerCall({ off: () => (sink = carrierOf(received)), floor: () => (sink = undefined) }),
  };
  void sink;
  const extraNs = (name: keyof typeof hooks): number => Math.max(0, hooks[name].off! - hooks[name].floor!);
  const worstHeaderNs = Math.max(
    extraNs('traceHeaders'),
    extraNs('contextFromHeaders'),
    extraNs('carrierOf'),
  );
  const on = fleetResult('fleet-tracing');
  const off = fleetResult('fleet');
  const stage = Object.keys(on.perPolicy)[0]!;
  const spans = on.spansPerPolicy ?? NaN;
  const messages = on.perPolicy[stage]!.messagesHandled;
  const boundUs = (spans * extraNs('inSpan') + 2 * messages * HOOKS_PER_MESSAGE * worstHeaderNs) / 1000;
  const serviceMs = Math.round(serviceCpuMsPerPolicy(off, Object.keys(off.perPolicy)[0]!) * 10) / 10;
  const report = {
    benchmark: 'tracing-off',
    description:
      'CPU nanoseconds per call (median of alternating rounds) of the tracing hooks with no SDK started (off) ' +
      'and of their floor, what a build without tracing runs instead (the direct call, the headers passed ' +
      'through). boundUsPerPolicy: an upper bound of what the hooks add per converged policy: spans per ' +
      `policy (bench/results/fleet-tracing.json) x inSpan's extra + 2 x messages per policy x ${HOOKS_PER_MESSAGE} ` +
      "x the worst header hook's extra; shareOfServiceCpu: that bound over the services' CPU per policy of " +
      'bench/results/fleet.json (tracing off).',
    node: process.version,
    rounds: ROUNDS,
    callsPerRound: PER_ROUND,
    hooksNs: hooks,
    spansPerPolicy: spans,
    messagesPerPolicy: messages,
    boundUsPerPolicy: Math.round(boundUs * 10) / 10,
    serviceCpuMsPerPolicy: serviceMs,
    shareOfServiceCpu: Number((boundUs / 1000 / serviceMs).toExponential(2)),
  };
  console.table(hooks);
  console.log(
    `tracing off adds at most ${report.boundUsPerPolicy} µs per policy, ` +
      `${(report.shareOfServiceCpu * 100).toPrecision(2)}% of the services' ${serviceMs} ms`,
  );
  writeResult('tracing-off', report);
}
