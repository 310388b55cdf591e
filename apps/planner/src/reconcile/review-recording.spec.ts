// What the planner asks the inspector for the review: the policy's retirements (the only roles a plan can
// drop) and the predefined roles its memberships and grants name.
import { expandPolicy, type PolicyContent } from '@rolepolicy/policy';
import { reviewQueryOf } from './review-recording.js';

describe('reviewQueryOf', () => {
  it('asks for drop facts of retirements and for the pg_* roles the policy names', () => {
    const expanded = expandPolicy(
      {
        roles: [{ name: 'app', login: true }, { name: 'ops' }],
        memberships: [
          { role: 'pg_read_all_data', members: [{ name: 'app' }] },
          { role: 'ops', members: [{ name: 'app' }] },
        ],
        retirements: [{ role: 'legacy' }],
      } as PolicyContent,
      { policyName: 'shop' },
    );
    if (!expanded.ok) throw new Error(JSON.stringify(expanded));
    expect(reviewQueryOf(expanded.desired)).toEqual({
      dropRoles: ['legacy'],
      predefinedRoles: ['pg_read_all_data'],
    });
  });
});
