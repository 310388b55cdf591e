// Retirement steps: terminate sessions, reassign owned objects, drop owned objects, then drop the role.
// A retired role that does not exist gets nothing, so a finished retirement plans no SQL.

import { compareCodePoints } from '../canonical-order.js';
import type { Change } from '../model/change.js';
import type { Retirement } from '../model/desired.js';

/** The retire-phase changes for every retirement whose role still exists, per role in step order. */
export function retirementChanges(
  retirements: readonly Retirement[],
  existing: ReadonlySet<string>,
): readonly Change[] {
  const out: Change[] = [];
  for (const r of [...retirements].sort((a, b) => compareCodePoints(a.role, b.role))) {
    if (!existing.has(r.role)) continue;
    if (r.terminate_sessions) out.push({ kind: 'terminate_sessions', role: r.role });
    if (r.reassign_owned_to !== null)
      out.push({ kind: 'reassign_owned', from_role: r.role, to_role: r.reassign_owned_to });
    if (r.drop_owned) out.push({ kind: 'drop_owned', role: r.role });
    out.push({ kind: 'drop_role', name: r.role });
  }
  return out;
}
