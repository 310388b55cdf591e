// The fleet bench's own checks (issue 28): a stage "falls into the slow mode" when it repeats work (more than
// 1.2 inspections per policy, or any failed pass), and then the services' logs say why. Failures are counted
// from the JSON log lines of every service: warnings and errors by message with names and numbers masked, and
// the planner's failed passes by condition reason.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** The most inspections per policy a healthy stage makes (one per applied policy, some slack). */
export const SLOW_MODE_INSPECTIONS = 1.2;

/** One kind of failure and how often a stage's services logged it. */
export type FailureCount = { readonly service: string; readonly what: string; readonly count: number };

/** Why a stage counts as the slow mode, or null. */
export function slowModeOf(
  perPolicy: Readonly<Record<string, number>>,
  breakdown: Readonly<Record<string, Readonly<Record<string, number>>>>,
): string | null {
  const why: string[] = [];
  const inspections = perPolicy['inspections'] ?? 0;
  if (inspections > SLOW_MODE_INSPECTIONS) why.push(`${inspections} inspections per policy`);
  const failed = breakdown['passes']?.['failed'] ?? 0;
  if (failed > 0) why.push(`${failed} failed passes per policy`);
  return why.length === 0 ? null : why.join(', ');
}

/** Masks what differs between occurrences of one failure: object names, hex ids, numbers. */
export function failureKey(message: string): string {
  return message
    .replace(/\b[\w.-]+\/[\w.-]+/g, '<ns>/<name>')
    .replace(/\b[0-9a-f]{8,}\b/g, '<id>')
    .replace(/\b\d+(\.\d+)?\b/g, 'N');
}

type LogLine = { level?: string; msg?: string; decision?: string; reason?: string };

/** Counts failures in one service's log text. */
export function countFailures(service: string, text: string): FailureCount[] {
  const counts = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    let parsed: LogLine;
    try {
      parsed = JSON.parse(line) as LogLine;
    } catch {
      continue;
    }
    let what: string | undefined;
    if (parsed.decision === 'failed') what = `failed pass: ${parsed.reason ?? 'no reason logged'}`;
    else if (parsed.level === 'warn' || parsed.level === 'error') what = failureKey(parsed.msg ?? '');
    if (what !== undefined) counts.set(what, (counts.get(what) ?? 0) + 1);
  }
  return [...counts].map(([what, count]) => ({ service, what, count }));
}

/** The `top` most frequent failures of the logs in `dir` (`<service>.log`), most frequent first. */
export function failureReasons(dir: string, top = 8): FailureCount[] {
  const all = readdirSync(dir)
    .filter((f) => f.endsWith('.log'))
    .flatMap((f) => countFailures(f.slice(0, -'.log'.length), readFileSync(path.join(dir, f), 'utf8')));
  return all.sort((a, b) => b.count - a.count || a.what.localeCompare(b.what)).slice(0, top);
}

/** One line per failure, for the console. */
export function formatReasons(reasons: readonly FailureCount[]): string {
  return reasons.map((r) => `    ${String(r.count).padStart(6)}  ${r.service}: ${r.what}`).join('\n');
}

/** Counts the API server's writes by verb and resource, from the emulator's request hook. */
export class ApiWriteCounter {
  private readonly counts = new Map<string, number>();

  /**
   * The emulator's request hook: every request that is not a read counts once, as `<VERB> <resource>[/<sub>]`;
   * one the API refused (a 409 on a stale resourceVersion, say: nothing was written) counts as
   * `refused <VERB> <resource>[/<sub>]`, outside the total (see {@link writesPerPolicy}).
   */
  readonly hook = (request: {
    readonly method: string;
    readonly path: string;
    readonly responded?: Promise<number>;
  }): void => {
    const key = apiWriteKey(request.method, request.path);
    if (key === null) return;
    const count = (name: string): void => void this.counts.set(name, (this.counts.get(name) ?? 0) + 1);
    if (request.responded === undefined) count(key);
    else void request.responded.then((status) => count(status >= 400 ? `${REFUSED}${key}` : key));
  };

  /** The counts so far (a copy). */
  snapshot(): Map<string, number> {
    return new Map(this.counts);
  }
}

/**
 * `POST events`, `PATCH postgrespolicies/status`, ... for a write; null for a read. Paths are the API's:
 * `/api/v1/namespaces/<ns>/<resource>[/<name>[/<sub>]]` or `/apis/<group>/<version>/namespaces/...`.
 */
export function apiWriteKey(method: string, path: string): string | null {
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return null;
  const parts = path.split('/').filter((p) => p !== '');
  const at = parts.indexOf('namespaces');
  const rest = at >= 0 ? parts.slice(at + 2) : parts.slice(parts[0] === 'api' ? 2 : 3);
  const [resource = '?', , sub] = rest;
  return `${method} ${resource}${sub === undefined ? '' : `/${sub}`}`;
}

/** The prefix of a refused write's key. */
export const REFUSED = 'refused ';

/** Writes per policy by kind between two snapshots, and their total (refused writes are listed, not added). */
export function writesPerPolicy(
  before: ReadonlyMap<string, number>,
  after: ReadonlyMap<string, number>,
  policies: number,
): Record<string, number> {
  const out: Record<string, number> = {};
  let total = 0;
  for (const [key, count] of [...after].sort(([a], [b]) => a.localeCompare(b))) {
    const grown = count - (before.get(key) ?? 0);
    if (grown <= 0) continue;
    if (!key.startsWith(REFUSED)) total += grown;
    out[key] = Math.round((grown / policies) * 100) / 100;
  }
  out['total'] = Math.round((total / policies) * 100) / 100;
  return out;
}
