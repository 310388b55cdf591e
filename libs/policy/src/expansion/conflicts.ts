// Ensure conflicts after expansion: a privilege asserted present and absent on one key, a wildcard and a named
// selector in one (grantee, type, schema) disagreeing (grants run before revokes, so it never converges),
// and the same default-privilege key + privilege both ways.

import { type ErrorSink, report } from '../validation/errors.js';
import { MESSAGES } from '../validation/messages.js';
import { type DefaultItem, defaultKey, type GrantItem, grantKey, grantPrefixKey } from './items.js';

function describeTarget(item: GrantItem): string {
  const object =
    item.schema === null
      ? `${item.object_type} ${item.name}`
      : `${item.object_type} ${item.schema}.${item.name}`;
  return `${object} for ${item.grantee}`;
}

/** Reports every grant ensure conflict at the path of the absent assertion. */
export function checkGrantConflicts(sink: ErrorSink, items: readonly GrantItem[]): void {
  // Conflicts need an absence; most policies have none, so skip indexing thousands of present grants.
  if (!items.some((item) => item.ensure === 'absent')) return;
  const present = new Map<string, Set<string>>();
  const presentByPrefix = new Map<string, GrantItem[]>();
  for (const item of items) {
    if (item.ensure !== 'present') continue;
    const key = grantKey(item);
    const set = present.get(key) ?? new Set<string>();
    item.privileges.forEach((p) => set.add(p));
    present.set(key, set);
    const prefix = grantPrefixKey(item);
    const siblings = presentByPrefix.get(prefix);
    if (siblings === undefined) presentByPrefix.set(prefix, [item]);
    else siblings.push(item);
  }
  for (const absent of items) {
    if (absent.ensure !== 'absent') continue;
    const same = present.get(grantKey(absent));
    for (const privilege of absent.privileges) {
      if (same?.has(privilege) === true) {
        report(sink, absent.path, MESSAGES.ensureConflict(`${privilege} on ${describeTarget(absent)}`));
        continue;
      }
      for (const other of presentByPrefix.get(grantPrefixKey(absent)) ?? []) {
        const crosses = (absent.name === '*') !== (other.name === '*');
        if (crosses && other.privileges.includes(privilege)) {
          const [p, a] = [describeTarget(other), describeTarget(absent)];
          report(sink, absent.path, MESSAGES.wildcardConflict(privilege, p, a));
          break;
        }
      }
    }
  }
}

/** Reports default-privilege keys with a privilege asserted both present and absent. */
export function checkDefaultConflicts(sink: ErrorSink, items: readonly DefaultItem[]): void {
  if (!items.some((item) => item.ensure === 'absent')) return;
  const present = new Map<string, Set<string>>();
  for (const item of items) {
    if (item.ensure !== 'present') continue;
    const key = defaultKey(item);
    const set = present.get(key) ?? new Set<string>();
    item.privileges.forEach((p) => set.add(p));
    present.set(key, set);
  }
  for (const absent of items) {
    if (absent.ensure !== 'absent') continue;
    const same = present.get(defaultKey(absent));
    for (const privilege of absent.privileges) {
      if (same?.has(privilege) === true) {
        const scope = absent.scope.type === 'global' ? 'global scope' : `schema ${absent.scope.schema}`;
        const what = `default ${privilege} on ${absent.on_type} in ${scope} owned by ${absent.owner} for ${absent.grantee}`;
        report(sink, absent.path, MESSAGES.ensureConflict(what));
      }
    }
  }
}
