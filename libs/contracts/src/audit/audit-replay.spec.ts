// Reading the trail back: records picked out of mixed log lines, duplicates counted once, and membership
// edges replayed from plan.applied and membership.* records.
import { summarise, type Change } from '@rolepolicy/policy';
import { membershipRecords, planAppliedRecord } from './audit-builders.js';
import { auditRecordsIn, dedupeAudit, membershipEdge, replayMemberships } from './audit-replay.js';

const database = { host: 'h', port: 5432, name: 'd', target: null };
const DB = 'h:5432';
// No change of its own counted: the replay reads the changes, not the summary.
const summary = summarise([]);

const applied = (key: string, changes: Change[]) =>
  planAppliedRecord({
    at: '2026-11-28T10:00:00.000Z',
    plan: { namespace: 'ns', name: `p-${key}` },
    policy: { name: 'p' },
    digest: `sha256:${key}`,
    idempotencyKey: key,
    summary,
    changes,
    statementCount: changes.length,
    database,
    executor: 'e',
  });

const scoped = (operation: 'Activate' | 'Revoke', changes: Change[]) =>
  membershipRecords({
    at: '2026-11-28T10:00:00.000Z',
    operation,
    idempotencyKey: `r/${operation}`,
    namespace: 'ns',
    request: { name: 'r' },
    plan: null,
    policy: { name: 'p' },
    bundleHash: 'sha256:b',
    changes,
    database,
    executor: 'e',
  });

describe('replayMemberships', () => {
  it('follows plans and ephemeral grants, and a dropped role loses its edges', () => {
    const records = [
      applied('1', [
        { kind: 'add_member', role: 'reader', member: 'app', inherit: true, admin: false },
        { kind: 'add_member', role: 'old', member: 'app', inherit: true, admin: false },
      ]),
      ...scoped('Activate', [
        { kind: 'add_member', role: 'writer', member: 'alice', inherit: true, admin: false },
      ]),
      applied('2', [{ kind: 'drop_role', name: 'old' }]),
      ...scoped('Revoke', [{ kind: 'remove_member', role: 'writer', member: 'alice', grantor: null }]),
    ];
    const timeline = replayMemberships(records);
    expect(timeline.map((t) => [...t.edges].sort())).toEqual([
      [membershipEdge(DB, 'old', 'app'), membershipEdge(DB, 'reader', 'app')],
      [
        membershipEdge(DB, 'old', 'app'),
        membershipEdge(DB, 'reader', 'app'),
        membershipEdge(DB, 'writer', 'alice'),
      ],
      [membershipEdge(DB, 'reader', 'app'), membershipEdge(DB, 'writer', 'alice')],
      [membershipEdge(DB, 'reader', 'app')],
    ]);
  });

  it('counts a record written twice once', () => {
    const record = applied('1', [
      { kind: 'add_member', role: 'r', member: 'm', inherit: true, admin: false },
    ]);
    expect(dedupeAudit([record, { ...record, at: '2026-11-28T11:00:00.000Z' }])).toHaveLength(1);
    expect(replayMemberships([record, record])).toHaveLength(1);
  });
});

describe('auditRecordsIn', () => {
  it('picks valid records out of any JSON log lines', () => {
    const record = applied('1', []);
    const lines = [
      'not json',
      JSON.stringify({ level: 'info', msg: 'pass', schema: 'x' }),
      JSON.stringify({ level: 'info', context: 'audit', audit: record }),
      JSON.stringify({ level: 'info', context: 'audit', audit: { ...record, event: 'made.up' } }),
    ];
    expect(auditRecordsIn(lines)).toEqual([record]);
  });
});
