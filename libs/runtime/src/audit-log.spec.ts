// The audit writer: one JSON line under the logger `audit` whatever LOG_LEVEL says, and the same record as
// an OpenTelemetry log record when a LoggerProvider is registered (a no-op when none is).
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { logs } from '@opentelemetry/api-logs';
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { auditRecordsIn, membershipRecords, type AuditRecord } from '@rolepolicy/contracts';
import { AuditLog, auditInstance } from './audit-log.js';

const record: AuditRecord = membershipRecords({
  at: '2026-11-28T10:00:00.000Z',
  operation: 'Activate',
  idempotencyKey: 'req-uid/Activate/sha256:bundle',
  namespace: 'shop',
  request: { name: 'alice-read', uid: 'req-uid' },
  plan: { name: 'alice-read-activate', uid: 'plan-uid' },
  policy: { name: 'orders', uid: 'policy-uid' },
  bundleHash: 'sha256:bundle',
  changes: [{ kind: 'add_member', role: 'app_reader', member: 'alice', inherit: true, admin: false }],
  database: { host: 'db.internal', port: 5432, name: 'orders', target: null },
  executor: 'executor-0',
})[0]!;

function capture(): { stream: PassThrough; lines: () => string[] } {
  const stream = new PassThrough();
  const chunks: string[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c.toString('utf8')));
  return {
    stream,
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter((l) => l.length > 0),
  };
}

afterEach(() => logs.disable());

describe('AuditLog', () => {
  it('writes one JSON line with the service, the logger name `audit` and the record', () => {
    const out = capture();
    new AuditLog('executor', { LOG_FORMAT: 'json' }, out.stream).write(record);
    const [line] = out.lines();
    expect(JSON.parse(line!)).toMatchObject({
      level: 'info',
      service: 'rolepolicy-executor',
      context: 'audit',
      msg: 'membership.granted EphemeralAccessRequest shop/alice-read',
      audit: record,
    });
    expect(auditRecordsIn(out.lines())).toEqual([record]);
  });

  it('emits the record on the OpenTelemetry logger rolepolicy.audit when a provider is registered', () => {
    const exporter = new InMemoryLogRecordExporter();
    logs.setGlobalLoggerProvider(
      new LoggerProvider({ processors: [new SimpleLogRecordProcessor({ exporter })] }),
    );
    new AuditLog('executor', { LOG_FORMAT: 'json' }, capture().stream).write(record);
    const [emitted] = exporter.getFinishedLogRecords();
    expect(emitted?.instrumentationScope.name).toBe('rolepolicy.audit');
    expect(emitted?.eventName).toBe('rolepolicy.audit.membership.granted');
    expect(emitted?.body).toEqual(JSON.parse(JSON.stringify(record)));
    expect(emitted?.attributes).toMatchObject({
      'rolepolicy.audit.id': record.id,
      'rolepolicy.audit.event': 'membership.granted',
      'k8s.namespace.name': 'shop',
    });
  });

  it('writes nothing anywhere else and throws nothing without a provider', () => {
    const out = capture();
    expect(() => new AuditLog('planner', { LOG_FORMAT: 'json' }, out.stream).write(record)).not.toThrow();
    expect(out.lines()).toHaveLength(1);
  });

  it('does not write a record again that it wrote recently (same id), but writes other records', () => {
    const out = capture();
    const audit = new AuditLog('access-scheduler', { LOG_FORMAT: 'json' }, out.stream);
    audit.write(record);
    audit.write({ ...record, at: '2026-11-28T10:00:05.000Z' });
    audit.write({ ...record, id: 'f'.repeat(32) });
    expect(auditRecordsIn(out.lines()).map((r) => r.id)).toEqual([record.id, 'f'.repeat(32)]);
  });

  describe('with AUDIT_LOG_FILE', () => {
    let dir: string;
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'rp-audit-'));
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it('appends the JSON lines to the file, even with LOG_FORMAT=pretty, and prints nothing', () => {
      const out = capture();
      const file = join(dir, 'audit.jsonl');
      const other = { ...record, id: 'e'.repeat(32) };
      new AuditLog('executor', { LOG_FORMAT: 'pretty', AUDIT_LOG_FILE: file }, out.stream).write(record);
      new AuditLog('planner', { LOG_FORMAT: 'json', AUDIT_LOG_FILE: file }, out.stream).write(other);
      const lines = readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.length > 0);
      expect(JSON.parse(lines[0]!)).toMatchObject({ service: 'rolepolicy-executor', context: 'audit' });
      expect(auditRecordsIn(lines)).toEqual([record, other]);
      expect(out.lines()).toEqual([]);
    });

    it('refuses to start when the file cannot be appended to', () => {
      const file = join(dir, 'missing', 'audit.jsonl');
      expect(() => new AuditLog('executor', { LOG_FORMAT: 'json', AUDIT_LOG_FILE: file })).toThrow(
        'cannot append to AUDIT_LOG_FILE: ENOENT',
      );
    });

    it('writes a record to stdout when the file can no longer be appended to', () => {
      const out = capture();
      const sub = join(dir, 'sub');
      const file = join(sub, 'audit.jsonl');
      mkdirSync(sub);
      const audit = new AuditLog('executor', { LOG_FORMAT: 'json', AUDIT_LOG_FILE: file }, out.stream);
      rmSync(sub, { recursive: true });
      audit.write(record);
      expect(auditRecordsIn(out.lines())).toEqual([record]);
    });
  });

  it('names the replica by HOSTNAME (the pod), else host and pid', () => {
    expect(auditInstance({ HOSTNAME: 'rolepolicy-executor-7d9f-0' })).toBe('rolepolicy-executor-7d9f-0');
    expect(auditInstance({})).toMatch(/\/\d+$/);
  });
});
