// The default ClusterRoles and ClusterRoleBindings an API server creates at start (labelled
// `kubernetes.io/bootstrapping: rbac-defaults`), abridged to what clients of this project need:
// discovery and self-reviews for every authenticated user, health and version for everyone,
// `cluster-admin`, and the aggregated `admin`/`edit`/`view` roles (which pick up any ClusterRole labelled
// `rbac.authorization.k8s.io/aggregate-to-<role>: "true"`).
import type { KubeObject } from '../types.js';
import type { PolicyRule } from './rbac.js';

const LABELS = { 'kubernetes.io/bootstrapping': 'rbac-defaults' };
const RBAC = 'rbac.authorization.k8s.io/v1';
const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update'];

function clusterRole(
  name: string,
  rules: PolicyRule[],
  extra: { labels?: Record<string, string>; aggregateFrom?: string } = {},
): KubeObject {
  return {
    apiVersion: RBAC,
    kind: 'ClusterRole',
    metadata: { name, labels: { ...LABELS, ...extra.labels } },
    ...(extra.aggregateFrom
      ? {
          aggregationRule: {
            clusterRoleSelectors: [
              { matchLabels: { [`rbac.authorization.k8s.io/aggregate-to-${extra.aggregateFrom}`]: 'true' } },
            ],
          },
        }
      : {}),
    rules,
  };
}

function groupBinding(name: string, groups: readonly string[]): KubeObject {
  return {
    apiVersion: RBAC,
    kind: 'ClusterRoleBinding',
    metadata: { name, labels: LABELS },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
    subjects: groups.map((g) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: g })),
  };
}

const aggregateTo = (role: string) => ({ [`rbac.authorization.k8s.io/aggregate-to-${role}`]: 'true' });

/** ClusterRoles first, then their bindings (create in this order). */
export function bootstrapRbac(): KubeObject[] {
  return [
    clusterRole('cluster-admin', [
      { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
      { nonResourceURLs: ['*'], verbs: ['*'] },
    ]),
    clusterRole('system:discovery', [
      {
        nonResourceURLs: [
          '/api',
          '/api/*',
          '/apis',
          '/apis/*',
          '/healthz',
          '/livez',
          '/openapi',
          '/openapi/*',
          '/readyz',
          '/version',
          '/version/',
        ],
        verbs: ['get'],
      },
    ]),
    clusterRole('system:basic-user', [
      {
        apiGroups: ['authorization.k8s.io'],
        resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
        verbs: ['create'],
      },
      { apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'], verbs: ['create'] },
    ]),
    clusterRole('system:public-info-viewer', [
      { nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/'], verbs: ['get'] },
    ]),
    clusterRole('admin', [], { aggregateFrom: 'admin' }),
    clusterRole('edit', [], { aggregateFrom: 'edit', labels: aggregateTo('admin') }),
    clusterRole('view', [], { aggregateFrom: 'view', labels: aggregateTo('edit') }),
    clusterRole(
      'system:aggregate-to-admin',
      [
        {
          apiGroups: ['rbac.authorization.k8s.io'],
          resources: ['roles', 'rolebindings'],
          verbs: [...READ, ...WRITE],
        },
      ],
      { labels: aggregateTo('admin') },
    ),
    clusterRole(
      'system:aggregate-to-edit',
      [
        { apiGroups: [''], resources: ['configmaps', 'secrets', 'serviceaccounts', 'events'], verbs: WRITE },
        { apiGroups: [''], resources: ['secrets'], verbs: READ },
        { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: [...READ, ...WRITE] },
      ],
      { labels: aggregateTo('edit') },
    ),
    clusterRole(
      'system:aggregate-to-view',
      [
        {
          apiGroups: [''],
          resources: ['configmaps', 'events', 'namespaces', 'serviceaccounts'],
          verbs: READ,
        },
      ],
      { labels: aggregateTo('view') },
    ),
    {
      ...groupBinding('cluster-admin', ['system:masters']),
    },
    groupBinding('system:discovery', ['system:authenticated']),
    groupBinding('system:basic-user', ['system:authenticated']),
    groupBinding('system:public-info-viewer', ['system:authenticated', 'system:unauthenticated']),
  ];
}
