// CPU time of the processes a benchmark stage runs, from /proc (Linux): each service process, PostgreSQL
// (every server on the machine: its postmasters' own and reaped children's time plus the live backends'),
// and the bench process itself with its reaped children (psql for the floor). A stage's CPU seconds divided
// by the machine's cores is the least wall time the same work could take here, whatever the scheduling.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

type Times = {
  readonly ppid: number;
  readonly comm: string;
  readonly own: number;
  readonly children: number;
};

let ticksPerSecond: number | undefined;
function ticks(): number {
  ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  return ticksPerSecond;
}

/** utime+stime and cutime+cstime of a process, in seconds; undefined once it is gone. */
function times(pid: number | 'self'): Times | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // "pid (comm) state ppid ... utime stime cutime cstime ...": comm may hold spaces, so split after ')'.
  const close = stat.lastIndexOf(')');
  const comm = stat.slice(stat.indexOf('(') + 1, close);
  const f = stat
    .slice(close + 2)
    .split(' ')
    .map(Number);
  const hz = ticks();
  return { ppid: f[1]!, comm, own: (f[11]! + f[12]!) / hz, children: (f[13]! + f[14]!) / hz };
}

/**
 * CPU seconds of every PostgreSQL process on the machine so far (exited backends included); with
 * `RP_BENCH_PG_PID` (the bench server's postmaster) only that server's, so other servers' work on a shared
 * machine is not counted.
 */
export function postgresCpuSeconds(): number {
  const only = Number(process.env['RP_BENCH_PG_PID'] ?? '') || undefined;
  const all = new Map<number, Times>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const t = times(Number(entry));
    if (t?.comm !== 'postgres') continue;
    if (only === undefined || Number(entry) === only || t.ppid === only) all.set(Number(entry), t);
  }
  let total = 0;
  for (const t of all.values()) {
    // A postmaster reaps its backends: their time is in its children's share once they exit.
    total += all.has(t.ppid) ? t.own : t.own + t.children;
  }
  return total;
}

/** CPU seconds of a process (0 once it is gone: sample before stopping it). */
export function processCpuSeconds(pid: number | undefined): number {
  return pid === undefined ? 0 : (times(pid)?.own ?? 0);
}

/** CPU seconds of this process and of its children that have exited (e.g. the floor's psql processes). */
export function benchCpuSeconds(): { readonly own: number; readonly children: number } {
  const t = times('self');
  return { own: t?.own ?? 0, children: t?.children ?? 0 };
}

/** The difference of two samples, key by key, rounded to 0.1 s. */
export function cpuDelta(
  before: Readonly<Record<string, number>>,
  after: Readonly<Record<string, number>>,
): Record<string, number> {
  return Object.fromEntries(
    Object.entries(after).map(([k, v]) => [k, Math.round((v - (before[k] ?? 0)) * 10) / 10]),
  );
}
