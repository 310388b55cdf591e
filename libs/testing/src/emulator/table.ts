// Server-side printing: `kubectl get` asks for `as=Table` and prints the columns the server chose,
// which for custom resources are the CRD's additionalPrinterColumns.
import type { JsonObject, KubeObject, PrinterColumn, ResourceType } from './types.js';

/** True when the Accept header asks for a meta.k8s.io Table. */
export function wantsTable(accept: string | undefined): boolean {
  return (accept ?? '').split(',').some((part) => /;\s*as=Table/.test(part) && /g=meta\.k8s\.io/.test(part));
}

/** Content-Type of a Table response. */
export const TABLE_CONTENT_TYPE = 'application/json;as=Table;v=v1;g=meta.k8s.io';

type Step =
  | { readonly field: string }
  | { readonly index: number }
  | { readonly filter: { readonly path: readonly string[]; readonly value: string } }
  | { readonly all: true };

// CRD printer columns use simple JSONPath: `.a.b`, `.a[0]`, `.a[*].b`, `.a[?(@.type=="Ready")].status`.
function parsePath(path: string): Step[] {
  const steps: Step[] = [];
  const re =
    /\.([A-Za-z0-9_-]+)|\[(\d+)\]|\[\*\]|\[\?\(@\.([A-Za-z0-9_.-]+)\s*==\s*["']([^"']*)["']\)\]|\['([^']+)'\]/g;
  let match: RegExpExecArray | null;
  const text = path.replace(/^\{|\}$/g, '').replace(/^\$/, '');
  while ((match = re.exec(text)) !== null) {
    if (match[1] !== undefined) steps.push({ field: match[1] });
    else if (match[2] !== undefined) steps.push({ index: Number(match[2]) });
    else if (match[3] !== undefined)
      steps.push({ filter: { path: match[3].split('.'), value: match[4] ?? '' } });
    else if (match[5] !== undefined) steps.push({ field: match[5] });
    else steps.push({ all: true });
  }
  return steps;
}

function dig(value: unknown, path: readonly string[]): unknown {
  let current = value;
  for (const key of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as JsonObject)[key];
  }
  return current;
}

/** Values a JSONPath selects in `object` (several when it passes through `[*]` or a filter). */
export function evaluatePath(object: unknown, path: string): unknown[] {
  let values: unknown[] = [object];
  for (const step of parsePath(path)) {
    const next: unknown[] = [];
    for (const value of values) {
      if ('field' in step) {
        if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
          const v = (value as JsonObject)[step.field];
          if (v !== undefined) next.push(v);
        }
      } else if ('index' in step) {
        if (Array.isArray(value) && step.index < value.length) next.push(value[step.index]);
      } else if ('filter' in step) {
        if (Array.isArray(value))
          next.push(...value.filter((item) => String(dig(item, step.filter.path)) === step.filter.value));
      } else if (Array.isArray(value)) next.push(...value);
    }
    values = next;
  }
  return values;
}

/** Kubernetes' short human duration (`45s`, `3m12s`, `5h`, `2d5h`, `45d`, `2y`). */
export function humanDuration(ms: number): string {
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

// As the API server's CRD table convertor: only the first match is printed; a `string` column prints
// it as JSONPath text (objects and arrays as JSON); a typed column whose value has another JSON type,
// or a JSON null, is a null cell (kubectl prints it blank); a `date` string that does not parse is `<invalid>`.
function cell(object: KubeObject, column: PrinterColumn, now: number): unknown {
  const values = evaluatePath(object, column.jsonPath);
  const value = values[0];
  if (value === undefined || value === null) return null;
  switch (column.type) {
    case 'date': {
      if (typeof value !== 'string') return null;
      const time = Date.parse(value);
      return Number.isNaN(time) ? '<invalid>' : humanDuration(now - time);
    }
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value) ? value : null;
    case 'number':
      return typeof value === 'number' ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    default:
      return typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value);
  }
}

/** Builds a meta.k8s.io/v1 Table of `objects` with the resource's printer columns. */
export function toTable(
  type: ResourceType,
  objects: readonly KubeObject[],
  resourceVersion: string,
  includeObject: string | null,
  now: number = Date.now(),
): JsonObject {
  const columns = type.printerColumns;
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: { resourceVersion },
    columnDefinitions: [
      {
        name: 'Name',
        type: 'string',
        format: 'name',
        description: 'Name must be unique within a namespace.',
        priority: 0,
      },
      ...columns.map((c) => ({
        name: c.name,
        type: c.type === 'date' ? 'string' : c.type,
        format: c.format ?? '',
        description: c.description ?? '',
        priority: c.priority ?? 0,
      })),
    ],
    rows: objects.map((object) => ({
      cells: [object.metadata.name, ...columns.map((c) => cell(object, c, now))],
      object:
        includeObject === 'Object'
          ? object
          : includeObject === 'None'
            ? null
            : { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: object.metadata },
    })),
  };
}
