// Membership diff per server version: a per-edge inherit flag exists only on PostgreSQL 16+, so on 15
// a declared inherit that differs from the member's rolinherit must not replan the edge forever.

import { diffMemberships } from './diff-memberships.js';

const edge = (inherit: boolean, admin = false) => ({
  role: 'ro',
  member: 'app',
  inherit,
  admin,
  grantor: null,
});

describe('memberships: an edge whose inherit/admin differ is revoked and granted again', () => {
  it('PostgreSQL 15: a declared inherit false on an inheriting member converges (no per-edge inherit)', () => {
    const result = diffMemberships({
      desired: [edge(false, true)],
      current: [edge(true, true)],
      executorRole: 'postgres',
      serverVersionNum: 150010,
    });
    expect(result).toEqual({ removes: [], adds: [] });
  });

  it('PostgreSQL 15: a changed admin option is still re-granted', () => {
    const result = diffMemberships({
      desired: [edge(true, true)],
      current: [edge(true, false)],
      executorRole: 'postgres',
      serverVersionNum: 150010,
    });
    expect(result.removes).toHaveLength(1);
    expect(result.adds).toEqual([
      { kind: 'add_member', role: 'ro', member: 'app', inherit: true, admin: true },
    ]);
  });

  it('PostgreSQL 16: a changed inherit is re-granted', () => {
    const result = diffMemberships({
      desired: [edge(false)],
      current: [{ ...edge(true), grantor: 'postgres' }],
      executorRole: 'postgres',
      serverVersionNum: 160002,
    });
    expect(result.adds).toHaveLength(1);
  });
});
