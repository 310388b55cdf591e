// A 200-role review scenario for the HTML report: 40 schemas x 4 profiles (160 generated roles) plus 40 login
// roles with memberships, against a database that already has part of it, a role to retire and stale grants.
import {
  computePlan,
  contentDigest,
  deriveManagedScope,
  expandPolicy,
  type CatalogSnapshot,
  type PolicyContent,
} from '@rolepolicy/policy';

import { roleState as state } from '../../../policy/src/diff/test-support/builders.js';
import type { ReviewInput } from '../build-artifact.js';

const SCHEMAS = Array.from({ length: 40 }, (_, i) => `svc${String(i).padStart(2, '0')}`);

export const LARGE_POLICY: PolicyContent = {
  reconciliation_mode: 'authoritative',
  default_owner: 'app_owner',
  profiles: {
    owner: { grants: [{ object: { type: 'schema' }, privileges: ['CREATE', 'USAGE'] }] },
    writer: {
      grants: [
        { object: { type: 'schema' }, privileges: ['USAGE'] },
        { object: { type: 'table', name: '*' }, privileges: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'] },
      ],
      default_privileges: [{ on_type: 'table', privileges: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'] }],
    },
    reader: {
      grants: [
        { object: { type: 'schema' }, privileges: ['USAGE'] },
        { object: { type: 'table', name: '*' }, privileges: ['SELECT'] },
      ],
      default_privileges: [{ on_type: 'table', privileges: ['SELECT'] }],
    },
    auditor: { grants: [{ object: { type: 'schema' }, privileges: ['USAGE'] }] },
  },
  schemas: SCHEMAS.map((name) => ({ name, profiles: ['owner', 'writer', 'reader', 'auditor'] })),
  roles: [{ name: 'app_owner', external: true }, ...SCHEMAS.map((s) => ({ name: `${s}_app`, login: true }))],
  memberships: SCHEMAS.flatMap((s, i) => [
    { role: `${s}-writer`, members: [{ name: `${s}_app` }] },
    { role: `${s}-reader`, members: [{ name: `${SCHEMAS[i ^ 1]!}_app` }] },
  ]),
  retirements: [{ role: 'legacy_batch', drop_owned: true }],
};

/** Half the schemas already exist with their roles; one app role holds a stale grant. */
export function largeSnapshot(): CatalogSnapshot {
  const existing = SCHEMAS.slice(0, 20);
  const roles = [
    { name: 'legacy_batch', state: state({ login: true }) },
    ...existing.flatMap((s) => [
      { name: `${s}_app`, state: state({ login: true }) },
      { name: `${s}-reader`, state: state({}) },
      { name: `${s}-writer`, state: state({}) },
    ]),
  ];
  return {
    server_version_num: 160004,
    current_database: 'platform',
    executor: { role: 'postgres', superuser: true, createrole: true, member_of: [] },
    identity: { physical: '7412330000000000001', physical_available: true, logical_fingerprint: null },
    roles,
    schemas: existing.map((name) => ({ name, owner: 'app_owner', owner_privileges: ['CREATE', 'USAGE'] })),
    grants: [
      ...existing.map((s) => ({
        grantee: `${s}-reader`,
        object_type: 'schema' as const,
        schema: null,
        name: s,
        privileges: ['USAGE' as const],
      })),
      { grantee: 'legacy_batch', object_type: 'schema', schema: null, name: 'svc00', privileges: ['USAGE'] },
      { grantee: 'svc03_app', object_type: 'table', schema: 'svc03', name: 'ledger', privileges: ['DELETE'] },
    ],
    default_privileges: [],
    memberships: [
      { role: 'svc01-writer', member: 'legacy_batch', inherit: true, admin: false, grantor: null },
      { role: 'svc02-writer', member: 'svc05_app', inherit: true, admin: false, grantor: null },
    ],
    inventory: existing.flatMap((schema) =>
      ['ledger', 'events'].map((name) => ({ kind: 'table' as const, schema, name, owner: 'app_owner' })),
    ),
    unsatisfiable_wildcards: [],
    existing_roles: ['app_owner', ...roles.map((r) => r.name)],
    function_signatures: [],
  };
}

/** The review input of the 200-role scenario. */
export function largeReviewInput(): ReviewInput {
  const expansion = expandPolicy(LARGE_POLICY, { policyName: 'platform' });
  if (!expansion.ok) throw new Error(expansion.errors.map((e) => `${e.path}: ${e.message}`).join('\n'));
  const desired = expansion.desired;
  const snapshot = largeSnapshot();
  return {
    toolVersion: '0.1.0',
    capturedAt: '2026-11-25T12:00:00Z',
    contentDigest: contentDigest(LARGE_POLICY).digest,
    commit: 'a1b2c3d',
    targetLabel: 'platform (production)',
    document: 'PostgresPolicy/platform/platform',
    mode: 'authoritative',
    desired,
    scope: deriveManagedScope(desired),
    snapshot,
    plan: computePlan({
      desired,
      snapshot,
      mode: 'authoritative',
      passwordSources: {},
      appliedPasswordSourceVersions: {},
      allowSchemaOwnerTransfers: false,
    }),
    facts: { executor_memberships: [], drop_roles: [], predefined_roles: [] },
  };
}
