// Issue 6: two policies claiming the same role or schema on one database: the later one gets Conflict.
import { blockingClaims, detectConflict, type PolicyClaims } from './conflict.js';

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

describe('conflicts across namespaces (ADR 0024)', () => {
  const mine = claims('alpha', '2026-01-01T00:00:00Z', ['app', 'secret_role'], ['inventory']);
  const theirs = { ...claims('beta', '2026-02-01T00:00:00Z', ['app'], ['billing']), namespace: 'team-b' };

  it('the later policy of another namespace yields, told only that another namespace claims its overlap', () => {
    const verdict = detectConflict(theirs, [mine]);
    expect(verdict).toMatchObject({
      kind: 'conflict',
      peers: [],
      otherNamespaces: { roles: ['app'], schemas: [] },
    });
    if (verdict.kind !== 'conflict') return;
    expect(verdict.message).toContain('a policy in another namespace (roles: app; schemas: -)');
    expect(verdict.message).not.toContain('team-a');
    expect(verdict.message).not.toContain('alpha');
    expect(verdict.message).not.toContain('secret_role');
  });

  it('same-namespace peers are still named beside an anonymous other namespace', () => {
    const sibling = { ...claims('gamma', '2026-01-15T00:00:00Z', ['app']), namespace: 'team-b' };
    const verdict = detectConflict(theirs, [mine, sibling]);
    if (verdict.kind !== 'conflict') throw new Error('expected a conflict');
    expect(verdict.peers.map((p) => `${p.namespace}/${p.name}`)).toEqual(['team-b/gamma']);
    expect(verdict.message).toContain('team-b/gamma (roles: app; schemas: -)');
    expect(verdict.message).not.toContain('team-a/');
  });

  it('blockingClaims lists only senior overlapping peers on the same database, oldest first', () => {
    const unrelated = { ...claims('delta', '2025-01-01T00:00:00Z', ['other']), namespace: 'team-c' };
    expect(blockingClaims(theirs, [mine, unrelated]).map((c) => c.name)).toEqual(['alpha']);
    expect(blockingClaims(mine, [theirs])).toEqual([]);
  });
});
