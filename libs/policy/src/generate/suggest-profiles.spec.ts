// suggestProfiles: per-schema roles folded into profiles x schemas, proven by expansion; what is not folded.

import { liveRole } from '../diff/test-support/builders.js';
import type { GrantEntry } from '../model/state.js';
import { generatePolicy } from './generate-policy.js';
import { suggestProfiles } from './suggest-profiles.js';
import { databasePublic, grant, source, table } from './test-support/sources.js';

describe('suggestProfiles', () => {
  const comment = (profile: string, schema: string) =>
    `Generated from profile '${profile}' for schema '${schema}'`;
  const perSchema = (schema: string, privileges: GrantEntry['privileges'] = ['SELECT']): GrantEntry[] => [
    { object_type: 'schema', schema: null, name: schema, grantee: `${schema}_ro`, privileges: ['USAGE'] },
    grant(`${schema}_ro`, schema, 't', privileges),
  ];
  const world = (cPrivileges: GrantEntry['privileges']) =>
    generatePolicy(
      source({
        snapshot: {
          roles: ['a', 'b', 'c'].map((s) => liveRole(`${s}_ro`, { comment: comment('ro', s), login: true })),
          schemas: ['a', 'b', 'c'].map((name) => ({ name, owner: null, owner_privileges: [] })),
          grants: [databasePublic, ...perSchema('a'), ...perSchema('b'), ...perSchema('c', cPrivileges)],
          inventory: [
            table('a', 't'),
            table('a', 'u'),
            table('b', 't'),
            table('b', 'u'),
            table('c', 't'),
            table('c', 'u'),
          ],
          memberships: [{ role: 'a_ro', member: 'c_ro', inherit: true, admin: false, grantor: null }],
        },
      }),
      { mode: 'authoritative' },
    );

  it('folds schemas whose grants are the same up to the schema name, and proves it by expansion', () => {
    const suggestion = suggestProfiles(world(['SELECT']));
    expect(suggestion.folded).toBe(true);
    expect(suggestion.policy.content.profiles).toEqual({
      ro: {
        login: true,
        grants: [
          { object: { type: 'schema' }, privileges: ['USAGE'] },
          { object: { type: 'table', name: 't' }, privileges: ['SELECT'] },
        ],
      },
    });
    expect(suggestion.policy.content.role_pattern).toBe('{schema}_{profile}');
    expect(suggestion.policy.content.schemas).toEqual(
      ['a', 'b', 'c'].map((name) => ({ name, profiles: ['ro'] })),
    );
    expect(suggestion.policy.content.roles).toEqual([]);
    expect(suggestion.policy.content.memberships).toEqual([{ role: 'a_ro', members: [{ name: 'c_ro' }] }]);
    expect(suggestion.report.at(-1)).toMatch(/folded 3 role\(s\) into 1 profile\(s\); proof/);
  });

  it('says what it could not fold and keeps it as generated', () => {
    const suggestion = suggestProfiles(world(['INSERT']));
    expect(suggestion.folded).toBe(true);
    expect(suggestion.policy.content.roles!.map((role) => role.name)).toEqual(['c_ro']);
    expect(suggestion.report[0]).toBe(
      'could not fold role "c_ro" (profile "ro", schema "c"): its grants differ from the other roles of profile "ro"',
    );
  });

  it('names roles that share access up to the schema name but lack the comment a profile would give them', () => {
    const flat = generatePolicy(
      source({
        snapshot: {
          roles: [liveRole('a_ro', { comment: 'readers of a' }), liveRole('b_ro')],
          schemas: ['a', 'b'].map((name) => ({ name, owner: null, owner_privileges: [] })),
          grants: [databasePublic, ...perSchema('a'), ...perSchema('b')],
          inventory: [table('a', 't'), table('b', 't')],
        },
      }),
      { mode: 'additive' },
    );
    const suggestion = suggestProfiles(flat);
    expect(suggestion.folded).toBe(false);
    expect(suggestion.report[0]).toMatch(
      /^roles "a_ro", "b_ro" have the same access up to the schema name but are not folded: a profile gives its roles the comment/,
    );
  });

  it('folds nothing when no two schemas share grants', () => {
    const flat = generatePolicy(
      source({
        snapshot: {
          roles: [liveRole('a_ro', { comment: comment('ro', 'a') })],
          schemas: [{ name: 'a', owner: null, owner_privileges: [] }],
        },
      }),
      { mode: 'additive' },
    );
    const suggestion = suggestProfiles(flat);
    expect(suggestion.folded).toBe(false);
    expect(suggestion.policy).toBe(flat);
    expect(suggestion.report.at(-1)).toBe('no schemas share grants up to the schema name: nothing folded');
  });
});
