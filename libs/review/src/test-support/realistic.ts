// A realistic review scenario for golden artifacts: two schemas x editor/viewer profiles, one-off roles with a
// password change, memberships (one inherit: false), default privileges, a retirement, an external role that
// does not exist yet, and a CREATEROLE non-superuser executor with its own membership in the owner role.
import {
  computePlan,
  contentDigest,
  deriveManagedScope,
  expandPolicy,
  type CatalogSnapshot,
  type DesiredState,
  type PolicyContent,
} from '@rolepolicy/policy';

import { roleState as state } from '../../../policy/src/diff/test-support/builders.js';
import type { ReviewInput } from '../build-artifact.js';
import type { ReviewFacts } from '../review-facts.js';

export const REALISTIC_POLICY: PolicyContent = {
  reconciliation_mode: 'authoritative',
  default_owner: 'app_owner',
  profiles: {
    editor: {
      grants: [
        { object: { type: 'schema' }, privileges: ['USAGE'] },
        { object: { type: 'table', name: '*' }, privileges: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'] },
        { object: { type: 'sequence', name: '*' }, privileges: ['USAGE', 'SELECT'] },
      ],
      default_privileges: [
        { on_type: 'table', privileges: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'] },
        { on_type: 'sequence', privileges: ['USAGE', 'SELECT'] },
      ],
    },
    viewer: {
      grants: [
        { object: { type: 'schema' }, privileges: ['USAGE'] },
        { object: { type: 'table', name: '*' }, privileges: ['SELECT'] },
      ],
      default_privileges: [{ on_type: 'table', privileges: ['SELECT'] }],
    },
  },
  schemas: [
    { name: 'inventory', profiles: ['editor', 'viewer'] },
    { name: 'orders', profiles: ['editor', 'viewer'] },
  ],
  roles: [
    { name: 'app_owner', external: true },
    { name: 'auditor', external: true },
    {
      name: 'app',
      login: true,
      comment: 'Checkout service',
      config: { statement_timeout: '30s' },
      password: { secretRef: { name: 'app-db' }, secretKey: 'password' },
    },
    { name: 'analyst', login: true },
  ],
  grants: [{ role: 'auditor', object: { type: 'schema', name: 'orders' }, privileges: ['USAGE'] }],
  memberships: [
    { role: 'orders-editor', members: [{ name: 'app' }] },
    { role: 'inventory-viewer', members: [{ name: 'app' }, { name: 'analyst', inherit: false }] },
  ],
  retirements: [{ role: 'legacy_app', reassign_owned_to: 'app_owner', drop_owned: true }],
};

const TABLES = ['customers', 'orders', 'stock'];

/** The live database the realistic policy is reviewed against (`serverVersionNum` 150000 or 160000+). */
export function realisticSnapshot(serverVersionNum: number): CatalogSnapshot {
  return {
    server_version_num: serverVersionNum,
    current_database: 'shop',
    executor: { role: 'rolepolicy_executor', superuser: false, createrole: true, member_of: ['app_owner'] },
    identity: { physical: '7412330000000000001', physical_available: true, logical_fingerprint: null },
    roles: [
      {
        name: 'app',
        state: state({ login: true, comment: 'Checkout service', config: { statement_timeout: '10s' } }),
      },
      { name: 'app_owner', state: state({}) },
      { name: 'legacy_app', state: state({ login: true }) },
      { name: 'orders-viewer', state: state({}) },
    ],
    schemas: [
      { name: 'inventory', owner: 'app_owner', owner_privileges: ['CREATE', 'USAGE'] },
      { name: 'orders', owner: 'app_owner', owner_privileges: ['CREATE', 'USAGE'] },
    ],
    grants: [
      {
        grantee: 'orders-viewer',
        object_type: 'schema',
        schema: null,
        name: 'orders',
        privileges: ['USAGE'],
      },
      { grantee: 'orders-viewer', object_type: 'table', schema: 'orders', name: '*', privileges: ['SELECT'] },
      {
        grantee: 'legacy_app',
        object_type: 'table',
        schema: 'orders',
        name: 'orders',
        privileges: ['SELECT', 'UPDATE'],
      },
    ],
    default_privileges: [],
    memberships: [
      { role: 'orders-viewer', member: 'legacy_app', inherit: true, admin: false, grantor: null },
    ],
    inventory: TABLES.flatMap((name) =>
      ['inventory', 'orders'].map((schema) => ({ kind: 'table' as const, schema, name, owner: 'app_owner' })),
    ),
    unsatisfiable_wildcards: [],
    existing_roles: ['app', 'app_owner', 'legacy_app', 'orders-viewer'],
    function_signatures: [],
  };
}

/** Catalog facts: the executor belongs to app_owner; legacy_app owns three objects and is connected. */
export const REALISTIC_FACTS: ReviewFacts = {
  executor_memberships: [
    { role: 'app_owner', member: 'rolepolicy_executor', inherit: true, admin: false, grantor: null },
  ],
  drop_roles: [
    {
      role: 'legacy_app',
      owned_current: 3,
      owned_shared: 0,
      owned_other: 0,
      acl_current: 1,
      acl_other: 0,
      sessions: 1,
      examples: [
        'table orders.legacy_audit',
        'sequence orders.legacy_audit_id_seq',
        'function orders.legacy_sync()',
      ],
      member_of: ['orders-viewer'],
      members: [],
    },
  ],
  predefined_roles: [],
};

/** The expanded realistic policy. */
export function realisticDesired(): DesiredState {
  const expansion = expandPolicy(REALISTIC_POLICY, { policyName: 'shop' });
  if (!expansion.ok) throw new Error(expansion.errors.map((e) => `${e.path}: ${e.message}`).join('\n'));
  return expansion.desired;
}

/** The full review input of the realistic scenario on `serverVersionNum`. */
export function realisticReviewInput(serverVersionNum: number): ReviewInput {
  const desired = realisticDesired();
  const scope = deriveManagedScope(desired);
  const snapshot = realisticSnapshot(serverVersionNum);
  const plan = computePlan({
    desired,
    snapshot,
    mode: desired.reconciliation_mode,
    passwordSources: { app: 'app-db:password:42' },
    appliedPasswordSourceVersions: { app: 'app-db:password:41' },
    allowSchemaOwnerTransfers: false,
  });
  return {
    toolVersion: '0.1.0',
    capturedAt: '2026-11-25T12:00:00Z',
    contentDigest: contentDigest(REALISTIC_POLICY).digest,
    commit: '3f2c1e9',
    targetLabel: 'shop (staging)',
    document: 'PostgresPolicy/shop/shop',
    mode: desired.reconciliation_mode,
    desired,
    scope,
    snapshot,
    plan,
    facts: REALISTIC_FACTS,
  };
}
