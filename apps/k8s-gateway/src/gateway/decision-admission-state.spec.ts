// The gateway's reading of the cluster's admission policies (ADR 0026): decisions are authenticated only
// while the reference policy exists and a binding denies what it refuses.
import { decisionAdmissionState, type BindingView } from './decision-admission-state.js';

const binding = (name: string, actions = ['Deny'], policyName = 'rolepolicy-decisions'): BindingView => ({
  name,
  policyName,
  validationActions: actions,
});
const listed = (policies: string[], bindings: BindingView[]) => ({
  kind: 'listed' as const,
  policies,
  bindings,
});

describe('decisionAdmissionState', () => {
  it('is authenticated with the policy and a denying binding, naming the bindings', () => {
    expect(decisionAdmissionState(listed(['rolepolicy-decisions'], [binding('b2'), binding('b1')]))).toEqual({
      v: 1,
      authenticated: true,
      detail: 'the admission policy rolepolicy-decisions is enforced by b1, b2',
      bindings: ['b1', 'b2'],
    });
  });

  it.each([
    ['no policy', listed([], [binding('b')]), /no ValidatingAdmissionPolicy rolepolicy-decisions/],
    ['no binding', listed(['rolepolicy-decisions'], []), /no ValidatingAdmissionPolicyBinding binds/],
    [
      'a binding of another policy',
      listed(['rolepolicy-decisions'], [binding('b', ['Deny'], 'other')]),
      /no ValidatingAdmissionPolicyBinding binds/,
    ],
    [
      'a binding that only warns and audits',
      listed(['rolepolicy-decisions'], [binding('b', ['Warn', 'Audit'])]),
      /\(b\) do not deny/,
    ],
    ['an API server without the API', { kind: 'not-served' as const }, /does not serve/],
    [
      'a gateway that may not list',
      { kind: 'unreadable' as const, reason: 'forbidden' },
      /cannot list.*forbidden/,
    ],
  ])('is unauthenticated with %s, and says so', (_, listing, detail) => {
    const state = decisionAdmissionState(listing);
    expect(state.authenticated).toBe(false);
    expect(state.bindings).toEqual([]);
    expect(state.detail).toMatch(detail);
  });
});
