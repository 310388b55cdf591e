// What the plugin prints, as kubectl prints it: aligned tables with upper-case headers, ages like `5m12s`,
// and `-o json|yaml|name`. Pure: objects and `now` in, text out.
import { stringify } from 'yaml';

export { OUTPUT_FORMATS, type OutputFormat } from './output-formats.js';

/**
 * Columns separated by three spaces, each as wide as its widest cell, no trailing blanks (kubectl's
 * tabwriter). An empty cell prints `<none>`, as kubectl does for a missing value.
 * @example renderTable(['NAME', 'PHASE'], [['a', 'Pending']]) // 'NAME   PHASE\na      Pending\n'
 */
export function renderTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const cells = [headers, ...rows.map((row) => headers.map((_, i) => (row[i] ?? '') || '<none>'))];
  const widths = headers.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? '').length)));
  return cells
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]! + 3)))
        .join('')
        .trimEnd(),
    )
    .map((line) => `${line}\n`)
    .join('');
}

/** kubectl's short duration: `45s`, `3m12s`, `5h`, `2d5h`, `45d`, `2y` (negative spans print as 0s). */
export function shortDuration(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 8) return hours % 24 === 0 ? `${days}d` : `${days}d${hours % 24}h`;
  if (days < 365 * 2) return `${days}d`;
  return `${Math.floor(days / 365)}y`;
}

/** The AGE column of an object created at `timestamp` ('' when unknown). */
export function age(timestamp: string | null | undefined, now: Date): string {
  const at = timestamp ? Date.parse(timestamp) : Number.NaN;
  return Number.isNaN(at) ? '' : shortDuration(now.getTime() - at);
}

/**
 * A duration in whole seconds as people write it: `1h30m`, `45s`, `2h` (`grantedDuration` is stored as
 * `5400s`).
 */
export function humanSeconds(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  const text = `${h ? `${h}h` : ''}${m ? `${m}m` : ''}${s ? `${s}s` : ''}`;
  return text || '0s';
}

/** `status.resolvedAccess.grantedDuration` (`<n>s`) for people; other text unchanged. */
export function humanGranted(duration: string | null | undefined): string {
  const match = /^(\d+)s$/.exec(duration ?? '');
  return match ? humanSeconds(Number(match[1])) : (duration ?? '');
}

/** A time until `timestamp` (`in 29m`) or since it (`3m ago`). */
export function relative(timestamp: string | null | undefined, now: Date): string {
  const at = timestamp ? Date.parse(timestamp) : Number.NaN;
  if (Number.isNaN(at)) return '';
  const delta = at - now.getTime();
  return delta >= 0 ? `in ${shortDuration(delta)}` : `${shortDuration(-delta)} ago`;
}

/** An object as `-o name` prints it: `<singular>.<group>/<name>`. */
export interface Named {
  readonly metadata: { readonly name?: string };
}

/**
 * Objects in a machine format. One object prints as itself; several (or a listing, `list: true`) as a
 * `List`, as kubectl does. `name` prints `<resource>.<group>/<name>` lines.
 */
export function formatObjects(
  objects: readonly Named[],
  format: 'json' | 'yaml' | 'name',
  resource: string,
  list: boolean,
): string {
  if (format === 'name') return objects.map((o) => `${resource}/${o.metadata.name ?? ''}\n`).join('');
  const value =
    !list && objects.length === 1 ? objects[0] : { apiVersion: 'v1', kind: 'List', items: objects };
  return format === 'json' ? `${JSON.stringify(value, null, 4)}\n` : stringify(value);
}
