// validateAuditRecord checks a record against its own event's schema instead of the 17-branch union: it must
// give the union's verdict for every value, in particular refuse a record that names one event and carries
// another's fields, an unknown or missing event, and any field the event does not define.
import { validatePayload } from '../contract.js';
import { AUDIT_EXAMPLES } from './audit-examples.js';
import { AUDIT_EVENTS, auditRecordContract, validateAuditRecord } from './audit-record.js';

const EXAMPLES = AUDIT_EVENTS.map((event) => AUDIT_EXAMPLES[event] as unknown as Record<string, unknown>);

const unionAccepts = (value: unknown): boolean => validatePayload(auditRecordContract, value).ok;

/** Values near the examples: other events' names, each field dropped, nulled, retyped, one field added. */
function variants(): unknown[] {
  const out: unknown[] = [null, 'plan.applied', [], {}];
  for (const record of EXAMPLES) {
    out.push(record, { ...record, extra: 'x' });
    for (const other of AUDIT_EVENTS) out.push({ ...record, event: other });
    out.push({ ...record, event: 'plan.unknown' }, { ...record, event: 1 });
    for (const key of Object.keys(record)) {
      const { [key]: _dropped, ...rest } = record;
      out.push(rest, { ...record, [key]: null }, { ...record, [key]: 'x' }, { ...record, [key]: 7 });
    }
  }
  return out;
}

describe('validateAuditRecord', () => {
  it('gives the whole union schema verdict for every example and every variant of one', () => {
    const values = variants();
    expect(values.length).toBeGreaterThan(1_000);
    const disagreements = values.filter((v) => validateAuditRecord(v).ok !== unionAccepts(v));
    expect(disagreements).toEqual([]);
  });

  it('accepts every event example', () => {
    for (const record of EXAMPLES)
      expect(validateAuditRecord(record)).toMatchObject({ ok: true, version: 1 });
  });

  it("refuses a record that names one event and carries another event's fields", () => {
    const applied = AUDIT_EXAMPLES['plan.applied'];
    const granted = AUDIT_EXAMPLES['membership.granted'];
    expect(validateAuditRecord({ ...applied, event: 'membership.granted' }).ok).toBe(false);
    expect(validateAuditRecord({ ...granted, event: 'plan.applied' }).ok).toBe(false);
    expect(validateAuditRecord({ ...applied, event: 'access.requested' }).ok).toBe(false);
  });

  it('refuses unknown or missing events, fields an event does not define, and non-objects', () => {
    const applied = AUDIT_EXAMPLES['plan.applied'];
    const { event: _event, ...unnamed } = applied;
    expect(validateAuditRecord({ ...applied, event: 'plan.exported' })).toMatchObject({
      ok: false,
      reason: 'schema_mismatch',
    });
    expect(validateAuditRecord(unnamed).ok).toBe(false);
    expect(validateAuditRecord({ ...applied, password: 'hunter2' }).ok).toBe(false);
    expect(validateAuditRecord({ ...applied, v: 2 })).toMatchObject({ ok: false, reason: 'unknown_version' });
    expect(validateAuditRecord('plan.applied')).toMatchObject({ ok: false, reason: 'not_an_object' });
  });

  it("names the contract and the failing path in a refusal, never the field's value", () => {
    const refused = validateAuditRecord({ ...AUDIT_EXAMPLES['plan.applied'], digest: 'x'.repeat(300) });
    expect(refused.ok).toBe(false);
    if (refused.ok) return;
    expect(refused.detail).toMatch(/^audit-record v1: \/digest /);
    expect(refused.detail).not.toContain('xxxx');
  });
});
