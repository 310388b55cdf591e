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
 * CPU seconds of every PostgreSQL process on the machine so far (exited backends included), or, given
 * `postmasters` (the pids of some servers' postmasters; by default `RP_BENCH_PG_PID`, the bench server's, when
 * set), of those servers only: a postmaster and its children (backends, background workers), summed over the
 * servers, so other servers' work on a shared machine is not counted.
 */
export function postgresCpuSeconds(postmasters?: readonly number[]): number {
  const benchServer = Number(process.env['RP_BENCH_PG_PID'] ?? '') || undefined;
  const ours = new Set(postmasters ?? (benchServer === undefined ? [] : [benchServer]));
  const all = new Map<number, Times>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const t = times(Number(entry));
    if (t?.comm === 'postgres') all.set(Number(entry), t);
  }
  let total = 0;
  for (const [pid, t] of all) {
    if (ours.size > 0 && !ours.has(pid) && !ours.has(t.ppid)) continue;
    // A postmaster reaps its backends: their time is in its children's share once they exit.
    total += all.has(t.ppid) ? t.own : t.own + t.children;
  }
  return total;
}

/** The postmaster pid of the server whose data folder is `dataDir` (first line of its postmaster.pid). */
export function postmasterPid(dataDir: string): number {
  const pid = Number(readFileSync(`${dataDir}/postmaster.pid`, 'utf8').split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`no postmaster pid in ${dataDir}`);
  return pid;
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
