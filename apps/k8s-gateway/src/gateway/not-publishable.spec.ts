// The NotPublishable condition: set once, other conditions kept, the right timestamp field per kind.
import {
  NOT_PUBLISHABLE_REASON,
  isPayloadTooLarge,
  notPublishableConditions,
  notPublishableMessage,
} from './not-publishable.js';

const NOW = '2026-11-25T12:00:00.000Z';

describe('notPublishableConditions', () => {
  it('sets Ready=False/NotPublishable and keeps the other condition types', () => {
    const object = {
      status: {
        conditions: [
          { type: 'Ready', status: 'True', reason: 'Reconciled', last_transition_time: 'earlier' },
          { type: 'ApprovalUnset', status: 'True', reason: 'Inferred' },
        ],
      },
    };
    expect(notPublishableConditions('PostgresPolicy', object, 'too big', NOW)).toEqual([
      {
        type: 'Ready',
        status: 'False',
        reason: NOT_PUBLISHABLE_REASON,
        message: 'too big',
        last_transition_time: NOW,
      },
      { type: 'ApprovalUnset', status: 'True', reason: 'Inferred' },
    ]);
  });

  it('writes nothing when the object already says so, whatever the message (sizes change with the write)', () => {
    const object = {
      status: {
        conditions: [{ type: 'Ready', status: 'False', reason: NOT_PUBLISHABLE_REASON, message: 'old' }],
      },
    };
    expect(notPublishableConditions('PostgresPolicy', object, 'new size', NOW)).toBeUndefined();
  });

  it('keeps the transition time when Ready was already False', () => {
    const object = {
      status: { conditions: [{ type: 'Ready', status: 'False', reason: 'X', lastTransitionTime: 't0' }] },
    };
    expect(notPublishableConditions('EphemeralAccessRequest', object, 'm', NOW)?.[0]).toEqual({
      type: 'Ready',
      status: 'False',
      reason: NOT_PUBLISHABLE_REASON,
      message: 'm',
      lastTransitionTime: 't0',
    });
  });

  it('stays within the spec limit of 8 conditions on access requests', () => {
    const conditions = Array.from({ length: 8 }, (_, i) => ({ type: `T${i}`, status: 'True' }));
    const out = notPublishableConditions('EphemeralAccessRequest', { status: { conditions } }, 'm', NOW);
    expect(out).toHaveLength(8);
    expect(out?.[0]?.['type']).toBe('Ready');
  });

  it('works on an object without status', () => {
    expect(notPublishableConditions('PostgresPolicyPlan', {}, 'm', NOW)).toHaveLength(1);
  });
});

describe('payload size errors', () => {
  it("recognises nats.js's max_payload refusal and nothing else", () => {
    expect(isPayloadTooLarge(new Error("'payload' max_payload size exceeded"))).toBe(true);
    expect(isPayloadTooLarge(new Error('TIMEOUT'))).toBe(false);
    expect(isPayloadTooLarge('max_payload')).toBe(false);
  });

  it('names both sizes in the message', () => {
    expect(notPublishableMessage(9000, 8192)).toContain('9000 bytes, more than max_payload (8192 bytes)');
  });
});
