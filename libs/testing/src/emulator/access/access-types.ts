// The built-in kinds of access control: RBAC (rbac.authorization.k8s.io/v1), admission policies
// (admissionregistration.k8s.io/v1) and the create-only review kinds (authentication.k8s.io/v1
// SelfSubjectReview, authorization.k8s.io/v1 *SubjectAccessReview, SelfSubjectRulesReview) that
// `kubectl auth whoami` and `kubectl auth can-i` post.
import { AGE, builtin } from '../builtin-type.js';
import type { ResourceType } from '../types.js';

const RBAC = 'rbac.authorization.k8s.io';
const ADMISSION = 'admissionregistration.k8s.io';

function review(group: string, kind: string, namespaced = false): ResourceType {
  return builtin({
    group,
    version: 'v1',
    kind,
    plural: `${kind.toLowerCase()}s`,
    singular: kind.toLowerCase(),
    namespaced,
    statusSubresource: false,
    printerColumns: [],
    verbs: ['create'],
  });
}

/** Served in every emulator (the objects matter only when authentication is on, or policies exist). */
export const ACCESS_TYPES: readonly ResourceType[] = [
  ...(['Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding'] as const).map((kind) =>
    builtin({
      group: RBAC,
      version: 'v1',
      kind,
      plural: `${kind.toLowerCase()}s`,
      singular: kind.toLowerCase(),
      namespaced: !kind.startsWith('Cluster'),
      statusSubresource: false,
      printerColumns: kind.endsWith('Binding')
        ? [{ name: 'Role', type: 'string', jsonPath: '.roleRef.name' }, AGE]
        : [{ name: 'Created At', type: 'date', jsonPath: '.metadata.creationTimestamp' }],
    }),
  ),
  builtin({
    group: ADMISSION,
    version: 'v1',
    kind: 'ValidatingAdmissionPolicy',
    plural: 'validatingadmissionpolicies',
    singular: 'validatingadmissionpolicy',
    namespaced: false,
    statusSubresource: true,
    tracksGeneration: true,
    printerColumns: [AGE],
  }),
  builtin({
    group: ADMISSION,
    version: 'v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    plural: 'validatingadmissionpolicybindings',
    singular: 'validatingadmissionpolicybinding',
    namespaced: false,
    statusSubresource: false,
    tracksGeneration: true,
    printerColumns: [AGE],
  }),
  review('authentication.k8s.io', 'SelfSubjectReview'),
  review('authorization.k8s.io', 'SelfSubjectAccessReview'),
  review('authorization.k8s.io', 'SelfSubjectRulesReview'),
  review('authorization.k8s.io', 'SubjectAccessReview'),
  review('authorization.k8s.io', 'LocalSubjectAccessReview', true),
];

/** Kinds whose POST is answered by the review handler instead of being stored. */
export const REVIEW_KINDS: ReadonlySet<string> = new Set(
  ACCESS_TYPES.filter((t) => t.verbs?.includes('create') && t.verbs.length === 1).map((t) => t.kind),
);
