// Reading the trail back: pick audit records out of a service's log lines, keep the first of each id (the
// dedupe rule), and replay the membership changes to say who was a member of which role after each record.
// Pure; what a consumer of the exported records does, and what the scripted-day test checks.
import { validateAuditRecord, type AuditRecord } from './audit-record.js';

/** The audit records in `lines` (JSON log lines of any service), valid ones only, in order. */
export function auditRecordsIn(lines: readonly string[]): AuditRecord[] {
  const records: AuditRecord[] = [];
  for (const line of lines) {
    if (!line.includes('"rolepolicy.audit"')) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      continue;
    }
    const candidate = (parsed as { audit?: unknown } | null)?.audit;
    const checked = validateAuditRecord(candidate);
    if (checked.ok) records.push(checked.value);
  }
  return records;
}

/** Keeps the first record of each id: a record written twice for one event counts once. */
export function dedupeAudit(records: readonly AuditRecord[]): AuditRecord[] {
  const seen = new Set<string>();
  return records.filter((r) => (seen.has(r.id) ? false : (seen.add(r.id), true)));
}

/**
 * `member` is a member of `role` on the server `server` (`host:port`). Roles and memberships belong to the
 * PostgreSQL server (cluster), not to one database: plans in two databases of one server change one graph.
 */
export type MembershipEdge = `${string}\u0000${string}\u0000${string}`;

/** The key of an edge, for sets and comparisons. */
export function membershipEdge(server: string, role: string, member: string): MembershipEdge {
  return `${server}\u0000${role}\u0000${member}`;
}

/** `host:port` of a record's database: the server whose roles it changed. */
export function serverKey(database: { host: string; port: number }): string {
  return `${database.host}:${database.port}`;
}

/**
 * Replays the changes of who is a member of which role, starting from `initial`: `plan.applied` (members
 * added and removed; a dropped role loses every edge on either side) and `membership.granted` / `.revoked`.
 * Returns the edges after every record in order (deduplicated by id), so a reader can answer "who had which
 * membership when" at any record's `at`.
 */
export function replayMemberships(
  records: readonly AuditRecord[],
  initial: Iterable<MembershipEdge> = [],
): { readonly after: AuditRecord; readonly edges: ReadonlySet<MembershipEdge> }[] {
  const edges = new Set<MembershipEdge>(initial);
  const timeline: { after: AuditRecord; edges: ReadonlySet<MembershipEdge> }[] = [];
  for (const record of dedupeAudit(records)) {
    switch (record.event) {
      case 'plan.applied': {
        const db = serverKey(record.database);
        const dropped = new Set(record.changes.rolesDropped);
        for (const edge of [...edges]) {
          const [edb, role, member] = edge.split('\u0000');
          if (edb === db && (dropped.has(role!) || dropped.has(member!))) edges.delete(edge);
        }
        for (const m of record.changes.membershipsRevoked) edges.delete(membershipEdge(db, m.role, m.member));
        for (const m of record.changes.membershipsGranted) edges.add(membershipEdge(db, m.role, m.member));
        break;
      }
      case 'membership.granted':
        for (const m of record.memberships)
          edges.add(membershipEdge(serverKey(record.database), m.role, m.member));
        break;
      case 'membership.revoked':
        for (const m of record.memberships)
          edges.delete(membershipEdge(serverKey(record.database), m.role, m.member));
        break;
      default:
        continue; // decisions and request phases change no edge themselves
    }
    timeline.push({ after: record, edges: new Set(edges) });
  }
  return timeline;
}
