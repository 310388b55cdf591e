// The audit record and the Event of a transition: who, what bundle, which phases; Warnings where a reviewer
// must look; never more than the Event's message limit.
import { auditRecord, transitionEvent } from './audit.js';
import { request } from './test-support/fixtures.js';

describe('transition audit', () => {
  it('records requester, decider, bundle and phases', () => {
    const req = request({ phase: 'PendingApproval', decidedBy: { username: 'bob@example.com' } });
    const record = auditRecord(
      req,
      { from: 'PendingApproval', to: 'Applying', reason: 'ApprovedBundleApplying', message: 'ok' },
      '2026-11-28T00:00:00.000Z',
    );
    expect(record).toMatchObject({
      schema: 'rolepolicy.audit',
      event: 'access.approved',
      source: 'access-scheduler',
      object: { kind: 'EphemeralAccessRequest', name: 'alice-read' },
      requestedBy: { username: 'alice@example.com' },
      decidedBy: { username: 'bob@example.com' },
      subject: 'alice',
      fromPhase: 'PendingApproval',
      toPhase: 'Applying',
    });
  });

  it.each([
    ['Denied', 'Warning'],
    ['ApprovalExpired', 'Warning'],
    ['Failed', 'Warning'],
    ['Active', 'Normal'],
    ['Ended', 'Normal'],
  ] as const)('an Event for %s is %s', (to, type) => {
    expect(transitionEvent({ from: 'Applying', to, reason: 'X', message: 'm' }).type).toBe(type);
  });

  it('keeps Event messages within 1024 characters', () => {
    const event = transitionEvent({
      from: 'Active',
      to: 'Revoking',
      reason: 'AccessExpired',
      message: 'x'.repeat(5000),
    });
    expect(event.message.length).toBeLessThanOrEqual(1024);
    expect(event).toMatchObject({
      action: 'EphemeralAccessLifecycle',
      component: 'rolepolicy-access-scheduler',
      reason: 'AccessExpired',
    });
  });
});
