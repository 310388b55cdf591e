import fc from 'fast-check';
import {
  NO_PRIVILEGED_NAMESPACES,
  describePrivileged,
  parsePrivilegedNamespaces,
  privilegedAllowed,
  privilegedRefusal,
  privilegedRoles,
  type RoleFacts,
} from './privileged.js';

const role = (name: string, over: Partial<RoleFacts> = {}): RoleFacts => ({
  name,
  superuser: false,
  createrole: false,
  bypassrls: false,
  replication: false,
  memberOf: [],
  ...over,
});

describe('privilegedRoles: what a bundle role is or reaches', () => {
  it.each<[string, RoleFacts[], string]>([
    ['SUPERUSER', [role('ops', { superuser: true })], 'role ops has SUPERUSER'],
    ['CREATEROLE', [role('ops', { createrole: true })], 'role ops has CREATEROLE'],
    ['BYPASSRLS', [role('ops', { bypassrls: true })], 'role ops has BYPASSRLS'],
    ['REPLICATION', [role('ops', { replication: true })], 'role ops has REPLICATION'],
    [
      'a predefined role granted itself',
      [role('pg_read_server_files')],
      'role pg_read_server_files is a predefined role',
    ],
    [
      'a member of a predefined role',
      [role('ops', { memberOf: ['pg_execute_server_program'] })],
      'role ops is a member of pg_execute_server_program, which is a predefined role',
    ],
    [
      'a member of a member of a superuser role',
      [
        role('ops', { memberOf: ['mid'] }),
        role('mid', { memberOf: ['root'] }),
        role('root', { superuser: true }),
      ],
      'role ops is a member of root, which has SUPERUSER (through ops -> mid -> root)',
    ],
  ])('finds %s', (_name, graph, message) => {
    const findings = privilegedRoles([graph[0]!.name], graph);
    expect(findings.map(describePrivileged)).toEqual([message]);
  });

  it('reports several attributes of one role together, and each privileged role once per bundle role', () => {
    const graph = [
      role('ops', { createrole: true, bypassrls: true, memberOf: ['pg_monitor', 'mid'] }),
      role('mid', { memberOf: ['pg_monitor'] }),
    ];
    expect(privilegedRoles(['ops'], graph).map(describePrivileged)).toEqual([
      'role ops has CREATEROLE and has BYPASSRLS',
      'role ops is a member of pg_monitor, which is a predefined role',
    ]);
  });

  it('finds nothing for plain roles, memberships among plain roles and cycles', () => {
    const graph = [role('reader', { memberOf: ['writer'] }), role('writer', { memberOf: ['reader'] })];
    expect(privilegedRoles(['reader', 'writer'], graph)).toEqual([]);
    expect(privilegedRoles(['unknown'], graph)).toEqual([]);
  });

  it('property: a role is reported iff it is reachable and privileged', () => {
    const names = ['r0', 'r1', 'r2', 'r3', 'pg_x'];
    const graphArb = fc.tuple(
      ...names.map((name) =>
        fc.record({
          name: fc.constant(name),
          superuser: fc.boolean(),
          createrole: fc.constant(false),
          bypassrls: fc.constant(false),
          replication: fc.constant(false),
          memberOf: fc.subarray(names.filter((n) => n !== name)),
        }),
      ),
    );
    fc.assert(
      fc.property(graphArb, fc.constantFrom(...names), (graph, start) => {
        const byName = new Map(graph.map((r) => [r.name, r]));
        const reach = new Set([start]);
        for (let grew = true; grew;) {
          grew = false;
          for (const n of [...reach])
            for (const p of byName.get(n)!.memberOf)
              if (!reach.has(p)) {
                reach.add(p);
                grew = true;
              }
        }
        const expected = [...reach].filter((n) => byName.get(n)!.superuser || n.startsWith('pg_')).sort();
        const found = privilegedRoles([start], graph);
        expect(found.map((f) => f.privileged).sort()).toEqual(expected);
        for (const f of found) {
          expect(f.path[0]).toBe(start);
          expect(f.path.at(-1)).toBe(f.privileged);
        }
      }),
    );
  });
});

describe('the opt-in: the access policy and the operator must both allow privileged roles', () => {
  const findings = privilegedRoles(['ops'], [role('ops', { superuser: true })]);

  it('refuses by default, naming the role and the policy field', () => {
    expect(privilegedRefusal(findings, 'team-a', false, NO_PRIVILEGED_NAMESPACES)).toBe(
      'role ops has SUPERUSER: the EphemeralAccessPolicy does not allow privileged roles (spec.allowPrivilegedRoles is not true)',
    );
  });

  it('refuses a policy that opts in where the operator does not allow it (a tenant cannot self-grant)', () => {
    const operator = { all: false, names: ['platform'] };
    expect(privilegedRefusal(findings, 'team-a', true, operator)).toBe(
      'role ops has SUPERUSER: the operator does not allow privileged roles in namespace team-a (EPHEMERAL_ACCESS_PRIVILEGED_NAMESPACES)',
    );
    expect(privilegedRefusal(findings, 'platform', false, operator)).toContain('spec.allowPrivilegedRoles');
  });

  it('allows when both allow, and never asks when nothing is privileged', () => {
    expect(privilegedRefusal(findings, 'platform', true, { all: false, names: ['platform'] })).toBeNull();
    expect(privilegedRefusal(findings, 'team-a', true, { all: true, names: [] })).toBeNull();
    expect(privilegedRefusal([], 'team-a', false, NO_PRIVILEGED_NAMESPACES)).toBeNull();
    expect(privilegedAllowed('x', true, { all: true, names: [] })).toEqual({ ok: true });
  });

  it.each<[string, unknown]>([
    ['', { ok: true, value: { all: false, names: [] } }],
    ['*', { ok: true, value: { all: true, names: [] } }],
    [' platform , dba,platform ', { ok: true, value: { all: false, names: ['dba', 'platform'] } }],
    ['Team_A', { ok: false, error: expect.stringContaining('namespace names') }],
    ['*,platform', { ok: false, error: expect.stringContaining('namespace names') }],
  ])('parses EPHEMERAL_ACCESS_PRIVILEGED_NAMESPACES=%j', (raw, expected) => {
    expect(parsePrivilegedNamespaces(raw)).toEqual(expected);
  });
});
