// When a revocation is due for ordering and metrics (revocationDueAt): a later expiresAt patched in by an
// approver never moves it later than the write-once clock (ADR 0020).
import type { EphemeralAccessRequest } from '@rolepolicy/kube';
import { revocationDueAt } from './clock.js';
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
