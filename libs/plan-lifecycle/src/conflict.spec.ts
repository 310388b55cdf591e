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

  it('policies on different servers never conflict', () => {
    const elsewhere = claims('delta', '2025-01-01T00:00:00Z', ['app'], ['inventory'], 'db-2');
    expect(detectConflict(late, [elsewhere])).toEqual({ kind: 'clear' });
  });

  it('a policy never conflicts with itself', () => {
    expect(detectConflict(early, [early])).toEqual({ kind: 'clear' });
  });
});

describe('roles are server-wide (ADR 0027)', () => {
  const senior = claims('alpha', '2026-01-01T00:00:00Z', ['app', 'reporting'], ['inventory'], 'pg:5432/one');
  const junior = claims('beta', '2026-02-01T00:00:00Z', ['app'], ['inventory'], 'pg:5432/two');

  it('a role claimed on another database of the same server makes the later policy yield', () => {
    const verdict = detectConflict(junior, [senior]);
    expect(verdict).toMatchObject({
      kind: 'conflict',
      peers: [{ namespace: 'team-a', name: 'alpha', roles: ['app'], schemas: [] }],
    });
    if (verdict.kind !== 'conflict') return;
    expect(verdict.message).toBe(
      'an earlier policy already manages these roles on the same PostgreSQL server (roles are server-wide): ' +
        'team-a/alpha (roles: app; schemas: -)',
    );
    expect(detectConflict(senior, [junior])).toEqual({ kind: 'clear' });
  });

  it('a role one side only references (external) on another database is no conflict', () => {
    expect(detectConflict({ ...junior, externalRoles: ['app'] }, [senior])).toEqual({ kind: 'clear' });
    expect(detectConflict(junior, [{ ...senior, externalRoles: ['app'] }])).toEqual({ kind: 'clear' });
    // On one database it still is (as before).
    const sameDb = { ...junior, databaseKey: 'pg:5432/one', externalRoles: ['app'] };
    expect(detectConflict(sameDb, [senior]).kind).toBe('conflict');
  });

  it('a schema of the same name on another database is another schema', () => {
    const schemasOnly = { ...junior, roles: ['own'] };
    expect(detectConflict(schemasOnly, [senior])).toEqual({ kind: 'clear' });
  });

  it('the physical identity decides when both sides have one: an alias of the server conflicts', () => {
    const alias = { ...junior, databaseKey: '10.0.0.5:5432/two', serverIdentity: '7712' };
    expect(detectConflict(alias, [{ ...senior, serverIdentity: '7712' }]).kind).toBe('conflict');
    // The same database through two host names: schemas conflict too.
    const sameDb = { ...junior, databaseKey: '10.0.0.5:5432/one', serverIdentity: '7712', roles: ['x'] };
    expect(detectConflict(sameDb, [{ ...senior, serverIdentity: '7712' }])).toMatchObject({
      kind: 'conflict',
      peers: [{ roles: [], schemas: ['inventory'] }],
    });
    // One address, two servers (a proxy routing by database): no conflict.
    const routed = { ...junior, serverIdentity: '9999' };
    expect(detectConflict(routed, [{ ...senior, serverIdentity: '7712' }])).toEqual({ kind: 'clear' });
  });

  it('without an identity on both sides the address decides', () => {
    const alias = { ...junior, databaseKey: '10.0.0.5:5432/two', serverIdentity: '7712' };
    expect(detectConflict(alias, [senior])).toEqual({ kind: 'clear' });
    expect(
      detectConflict({ ...junior, serverIdentity: null }, [{ ...senior, serverIdentity: '7712' }]).kind,
    ).toBe('conflict');
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
