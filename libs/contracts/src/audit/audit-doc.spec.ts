// docs/audit.md agrees with the schema: every event has a section, each section lists exactly the event's
// fields in schema order, and its example is the builders' example (audit-examples.ts), valid under v1.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { validatePayload } from '../contract.js';
import { AUDIT_EXAMPLES } from './audit-examples.js';
import { AUDIT_EVENTS, AuditRecordV1, auditRecordContract, type AuditEvent } from './audit-record.js';

const DOC = readFileSync(fileURLToPath(new URL('../../../../docs/audit.md', import.meta.url)), 'utf8');
const ENVELOPE = ['schema', 'v', 'id', 'at', 'event', 'source', 'object'];

type Section = { events: AuditEvent[]; fields: string[]; example: unknown };

/** The `### \`event\`` sections of the page under "## Events". */
function sections(): Section[] {
  const events = DOC.slice(DOC.indexOf('\n## Events'), DOC.indexOf('\n## Written once per event'));
  return events
    .split('\n### ')
    .slice(1)
    .map((text) => {
      const heading = text.slice(0, text.indexOf('\n'));
      const fields = /^Fields: (.*)$/m.exec(text)?.[1] ?? '';
      const json = /```json\n([\s\S]*?)```/.exec(text)?.[1] ?? 'null';
      return {
        events: [...heading.matchAll(/`([a-z_.]+)`/g)].map((m) => m[1] as AuditEvent),
        fields: [...fields.matchAll(/`([A-Za-z]+)`/g)].map((m) => m[1]!),
        example: JSON.parse(json) as unknown,
      };
    });
}

/** The event-specific fields of `event`, in schema order. */
function schemaFields(event: AuditEvent): string[] {
  const branch = AuditRecordV1.anyOf.find((s) => s.properties.event.const === event)!;
  return Object.keys(branch.properties).filter((k) => !ENVELOPE.includes(k));
}

describe('docs/audit.md', () => {
  it('has a section for every event, and none for an event the schema lacks', () => {
    const documented = sections().flatMap((s) => s.events);
    expect([...documented].sort()).toEqual([...AUDIT_EVENTS].sort());
  });

  it.each(sections().map((s) => [s.events.join(', '), s] as const))(
    '%s: the field list is the schema',
    (_name, section) => {
      for (const event of section.events) expect(section.fields).toEqual(schemaFields(event));
    },
  );

  it.each(sections().map((s) => [s.events.join(', '), s] as const))(
    '%s: the example is the builders and valid v1',
    (_name, section) => {
      const event = (section.example as { event: AuditEvent }).event;
      expect(section.events).toContain(event);
      expect(section.example).toEqual(AUDIT_EXAMPLES[event]);
      expect(validatePayload(auditRecordContract, section.example).ok).toBe(true);
    },
  );

  it('every example of the builders is valid v1', () => {
    for (const event of AUDIT_EVENTS) {
      const checked = validatePayload(auditRecordContract, AUDIT_EXAMPLES[event]);
      expect({ event, ok: checked.ok }).toEqual({ event, ok: true });
      expect(AUDIT_EXAMPLES[event].event).toBe(event);
    }
  });

  it('the envelope table lists the envelope', () => {
    const table = DOC.slice(DOC.indexOf('## Envelope'), DOC.indexOf('Shared shapes'));
    expect([...table.matchAll(/^\| `([a-z]+)`/gm)].map((m) => m[1])).toEqual(ENVELOPE);
  });
});
