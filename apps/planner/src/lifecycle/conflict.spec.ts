// Issue 6: two policies claiming the same role or schema on one database: the later one gets Conflict.
import { detectConflict, type PolicyClaims } from './conflict.js';

function claims(
  name: string,
  created: string,
  roles: string[],
  schemas: string[] = [],
  databaseKey = 'db-1',
): PolicyClaims {
  return {
    namespace: 'team-a',
    name,
    uid: `uid-${name}`,
    creationTimestamp: created,
    databaseKey,
    roles,
    schemas,
  };
}

describe('conflict between policies on one database', () => {
  const early = claims('alpha', '2026-01-01T00:00:00Z', ['app', 'reporting'], ['inventory']);
  const late = claims('beta', '2026-02-01T00:00:00Z', ['reporting'], ['billing']);

  it('the later policy (by creationTimestamp) yields and the message names the earlier one and the overlap', () => {
    const verdict = detectConflict(late, [early]);
    expect(verdict.kind).toBe('conflict');
    if (verdict.kind === 'conflict') {
      expect(verdict.peers).toEqual([
        { namespace: 'team-a', name: 'alpha', roles: ['reporting'], schemas: [] },
      ]);
      expect(verdict.message).toContain('team-a/alpha');
      expect(verdict.message).toContain('reporting');
    }
  });

  it('the earlier policy keeps converging', () => {
    expect(detectConflict(early, [late])).toEqual({ kind: 'clear' });
  });

  it('schemas conflict like roles', () => {
    const other = claims('gamma', '2026-03-01T00:00:00Z', ['x'], ['inventory']);
    expect(detectConflict(other, [early]).kind).toBe('conflict');
  });

  it('ties on creationTimestamp are broken by name', () => {
    const a = claims('aaa', '2026-01-01T00:00:00Z', ['app']);
    const b = claims('bbb', '2026-01-01T00:00:00Z', ['app']);
    expect(detectConflict(b, [a]).kind).toBe('conflict');
    expect(detectConflict(a, [b]).kind).toBe('clear');
  });

  it('policies on different databases never conflict', () => {
    const elsewhere = claims('delta', '2025-01-01T00:00:00Z', ['app'], ['inventory'], 'db-2');
    expect(detectConflict(late, [elsewhere])).toEqual({ kind: 'clear' });
  });

  it('a policy never conflicts with itself', () => {
    expect(detectConflict(early, [early])).toEqual({ kind: 'clear' });
  });
});
