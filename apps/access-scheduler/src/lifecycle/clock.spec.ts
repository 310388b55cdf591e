// When a revocation is due for ordering and metrics (revocationDueAt): a later expiresAt patched in by an
// approver never moves it later than the write-once clock (ADR 0020).
import type { EphemeralAccessRequest } from '@rolepolicy/kube';
import { revocationDueAt, revocationWaiting } from './clock.js';
import { request, T0 } from './test-support/fixtures.js';

const iso = (ms: number) => new Date(ms).toISOString();

function active(status: Record<string, unknown>): EphemeralAccessRequest {
  const base = request({ phase: 'Active' });
  return { ...base, status: { ...base.status, ...status } } as EphemeralAccessRequest;
}

describe('revocationDueAt', () => {
  const granted = { resolvedAccess: { grantedDuration: '600s' } };

  it('is activatedAt + grantedDuration when expiresAt agrees', () => {
    const r = active({ ...granted, activatedAt: iso(T0), expiresAt: iso(T0 + 600_000) });
    expect(revocationDueAt(r)).toBe(T0 + 600_000);
  });

  it('ignores an expiresAt patched later than the approved duration', () => {
    const r = active({ ...granted, activatedAt: iso(T0), expiresAt: iso(T0 + 24 * 3600_000) });
    expect(revocationDueAt(r)).toBe(T0 + 600_000);
  });

  it('takes an earlier expiresAt (a revocation is never put off by the report)', () => {
    const r = active({ ...granted, activatedAt: iso(T0), expiresAt: iso(T0 + 60_000) });
    expect(revocationDueAt(r)).toBe(T0 + 60_000);
  });

  it('falls back to expiresAt before the clock is readable, and is undefined with neither', () => {
    expect(revocationDueAt(active({ expiresAt: iso(T0) }))).toBe(T0);
    expect(revocationDueAt(active({}))).toBeUndefined();
  });
});

describe('revocationWaiting', () => {
  const granted = { resolvedAccess: { grantedDuration: '600s' }, activatedAt: iso(T0) };

  it('is true past the expiry of a request that holds access, and false before it', () => {
    for (const phase of ['Applying', 'Active']) {
      const r = active({ ...granted, phase });
      expect(revocationWaiting(r, T0 + 600_000)).toBe(true);
      expect(revocationWaiting(r, T0 + 599_999)).toBe(false);
    }
  });

  it('is true for a Revoking request, and for a holding request being deleted, whatever the time', () => {
    expect(revocationWaiting(active({ ...granted, phase: 'Revoking' }), T0)).toBe(true);
    const deleting = {
      ...active(granted),
      metadata: { ...active(granted).metadata, deletionTimestamp: iso(T0) },
    };
    expect(revocationWaiting(deleting, T0)).toBe(true);
  });

  it('is false for a request that holds nothing, and for none at all', () => {
    for (const phase of ['Pending', 'PendingApproval', 'Ended', 'Revoked', 'Denied'])
      expect(revocationWaiting(active({ ...granted, phase }), T0 + 3600_000)).toBe(false);
    expect(revocationWaiting(undefined, T0)).toBe(false);
  });
});
