// Assembles the five CustomResourceDefinition objects (names, printer columns, status subresource, schema).
// deploy/crds/*.yaml is this output, checked in; a test fails when the two differ (regenerate with gen:crds).
import type { TSchema } from '@sinclair/typebox';
import { stringify } from 'yaml';
import { CATEGORIES, GROUP, KIND_NAMES, KINDS, VERSION, type Kind } from '../constants.js';
import { PostgresPolicyCandidateSpec, PostgresPolicyCandidateStatus } from './candidate.schema.js';
import {
  EphemeralAccessPolicySpec,
  EphemeralAccessPolicyStatus,
  EphemeralAccessRequestSpec,
  EphemeralAccessRequestStatus,
} from './ephemeral.schema.js';
import { PostgresPolicyPlanSpec, PostgresPolicyPlanStatus } from './plan.schema.js';
import { PostgresPolicySpec, PostgresPolicyStatus } from './postgres-policy.schema.js';

/** An OpenAPI v3 structural schema node as it appears in a CRD (JSON data, no TypeBox symbols). */
export interface JsonSchema {
  readonly type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  readonly description?: string;
  readonly properties?: { readonly [name: string]: JsonSchema };
  readonly additionalProperties?: JsonSchema | boolean;
  readonly items?: JsonSchema;
  readonly required?: readonly string[];
  readonly enum?: readonly unknown[];
  readonly default?: unknown;
  readonly nullable?: boolean;
  readonly format?: string;
  readonly pattern?: string;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly maxProperties?: number;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly 'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  readonly 'x-kubernetes-list-map-keys'?: readonly string[];
  readonly 'x-kubernetes-preserve-unknown-fields'?: boolean;
  readonly 'x-kubernetes-validations'?: readonly {
    readonly rule: string;
    readonly message?: string;
    readonly messageExpression?: string;
    readonly reason?: string;
    readonly fieldPath?: string;
    readonly optionalOldSelf?: boolean;
  }[];
}

/** One `kubectl get` column. */
export interface PrinterColumn {
  readonly name: string;
  readonly type: 'string' | 'integer' | 'boolean' | 'date' | 'number';
  readonly jsonPath: string;
  readonly description?: string;
  readonly priority?: number;
  readonly format?: string;
}

/** A CustomResourceDefinition (apiextensions.k8s.io/v1) with one served version. */
export interface CustomResourceDefinition {
  readonly apiVersion: 'apiextensions.k8s.io/v1';
  readonly kind: 'CustomResourceDefinition';
  readonly metadata: { readonly name: string; readonly labels?: Readonly<Record<string, string>> };
  readonly spec: {
    readonly group: string;
    readonly scope: 'Namespaced' | 'Cluster';
    readonly names: {
      readonly kind: string;
      readonly listKind: string;
      readonly plural: string;
      readonly singular: string;
      readonly shortNames?: readonly string[];
      readonly categories?: readonly string[];
    };
    readonly versions: readonly {
      readonly name: string;
      readonly served: boolean;
      readonly storage: boolean;
      readonly subresources?: { readonly status?: Record<string, never> };
      readonly additionalPrinterColumns?: readonly PrinterColumn[];
      readonly schema: { readonly openAPIV3Schema: JsonSchema };
    }[];
  };
}

const age: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };
// A condition's status or message as a column. A column must read a condition the controller sets:
// the access policy's controller sets Accepted, never Ready (its READY column used to print nothing).
const conditionColumn = (
  name: string,
  type: string,
  field: 'status' | 'message',
  extra: Partial<PrinterColumn> = {},
): PrinterColumn => ({
  name,
  type: 'string',
  jsonPath: `.status.conditions[?(@.type=="${type}")].${field}`,
  ...extra,
});

/** Per kind: schema parts, whether status may be null, printer columns and a one-line description. */
const KIND_PARTS: {
  readonly [K in Kind]: {
    readonly description: string;
    readonly spec: TSchema;
    readonly status: TSchema;
    readonly nullableStatus: boolean;
    readonly columns: readonly PrinterColumn[];
  };
} = {
  PostgresPolicy: {
    description: 'Desired PostgreSQL roles, privileges, default privileges and memberships for one database.',
    spec: PostgresPolicySpec,
    status: PostgresPolicyStatus,
    nullableStatus: false,
    columns: [
      { name: 'Mode', type: 'string', jsonPath: '.spec.mode' },
      { name: 'Approval', type: 'string', jsonPath: '.spec.approval' },
      { name: 'Reconciliation', type: 'string', jsonPath: '.spec.reconciliation_mode' },
      conditionColumn('Ready', 'Ready', 'status'),
      { name: 'Suspended', type: 'boolean', jsonPath: '.spec.suspend' },
      // The plan in flight (awaiting a decision or execution); empty once the policy converged.
      { name: 'Plan', type: 'string', jsonPath: '.status.current_plan_ref.name', priority: 1 },
      { name: 'Digest', type: 'string', jsonPath: '.status.content_digest', priority: 1 },
      // The Ready message: what was done when healthy, the error (as in status.last_error) when not.
      conditionColumn('Message', 'Ready', 'message', { priority: 1 }),
      age,
    ],
  },
  PostgresPolicyCandidate: {
    description: 'An immutable proposal of policy content, planned in its parent policy for review.',
    spec: PostgresPolicyCandidateSpec,
    status: PostgresPolicyCandidateStatus,
    nullableStatus: true,
    columns: [
      { name: 'Policy', type: 'string', jsonPath: '.spec.policyRef.name' },
      { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
      { name: 'Plan', type: 'string', jsonPath: '.status.planRef.name' },
      { name: 'Replaces', type: 'string', jsonPath: '.spec.replaces', priority: 1 },
      { name: 'Digest', type: 'string', jsonPath: '.status.contentDigest', priority: 1 },
      age,
    ],
  },
  PostgresPolicyPlan: {
    description: 'A reconciliation plan; approval binds to status.changeDigest.',
    spec: PostgresPolicyPlanSpec,
    status: PostgresPolicyPlanStatus,
    nullableStatus: false,
    columns: [
      { name: 'Policy', type: 'string', jsonPath: '.spec.policyRef.name' },
      { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
      { name: 'Mode', type: 'string', jsonPath: '.spec.reconciliationMode' },
      { name: 'Changes', type: 'integer', jsonPath: '.status.changeSummary.total' },
      { name: 'Decided-By', type: 'string', jsonPath: '.status.decidedBy.username', priority: 1 },
      { name: 'Digest', type: 'string', jsonPath: '.status.changeDigest', priority: 1 },
      age,
    ],
  },
  EphemeralAccessPolicy: {
    description: 'A bundle of role memberships that may be requested for a bounded duration.',
    spec: EphemeralAccessPolicySpec,
    status: EphemeralAccessPolicyStatus,
    nullableStatus: true,
    columns: [
      { name: 'Policy', type: 'string', jsonPath: '.spec.postgresPolicyRef.name' },
      { name: 'Approval', type: 'string', jsonPath: '.spec.approval.mode' },
      { name: 'Max-Duration', type: 'string', jsonPath: '.spec.maximumDuration' },
      { name: 'Suspended', type: 'boolean', jsonPath: '.spec.suspend' },
      conditionColumn('Accepted', 'Accepted', 'status'),
      age,
    ],
  },
  EphemeralAccessRequest: {
    description: 'A request for an ephemeral access bundle for one subject role.',
    spec: EphemeralAccessRequestSpec,
    status: EphemeralAccessRequestStatus,
    nullableStatus: true,
    columns: [
      { name: 'Access-Policy', type: 'string', jsonPath: '.spec.accessPolicyRef.name' },
      { name: 'Subject', type: 'string', jsonPath: '.spec.subject.role' },
      { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
      { name: 'Requested-By', type: 'string', jsonPath: '.spec.requestedBy.username', priority: 1 },
      { name: 'Expires', type: 'string', jsonPath: '.status.expiresAt' },
      age,
    ],
  },
};

/** Key order of an emitted schema node: type first, structure after scalars, CEL rules last. */
const KEY_ORDER = [
  'type',
  'description',
  'format',
  'enum',
  'default',
  'nullable',
  'pattern',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'minItems',
  'maxItems',
  'maxProperties',
  'required',
  'properties',
  'additionalProperties',
  'items',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-validations',
];

function orderKeys(node: unknown, inProperties = false): unknown {
  if (Array.isArray(node)) return node.map((n) => orderKeys(n));
  if (typeof node !== 'object' || node === null) return node;
  const entries = Object.entries(node as Record<string, unknown>);
  const rank = (k: string): number =>
    inProperties ? 0 : KEY_ORDER.indexOf(k) === -1 ? KEY_ORDER.length : KEY_ORDER.indexOf(k);
  entries.sort((a, b) => rank(a[0]) - rank(b[0]));
  return Object.fromEntries(
    entries.map(([k, v]) => [
      k,
      k === 'default' || k === 'enum' ? v : orderKeys(v, !inProperties && k === 'properties'),
    ]),
  );
}

/** Strips TypeBox's symbol keys and undefined values, and orders keys: what remains is plain CRD JSON. */
function plain(schema: TSchema): JsonSchema {
  return orderKeys(JSON.parse(JSON.stringify(schema))) as JsonSchema;
}

/** Builds the CustomResourceDefinition of one kind. */
export function buildCrd(kind: Kind): CustomResourceDefinition {
  const names = KIND_NAMES[kind];
  const parts = KIND_PARTS[kind];
  const status = plain(parts.status);
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${names.plural}.${GROUP}`, labels: { 'app.kubernetes.io/part-of': 'rolepolicy' } },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: {
        kind,
        listKind: names.listKind,
        plural: names.plural,
        singular: names.singular,
        shortNames: [...names.shortNames],
        categories: [...CATEGORIES],
      },
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: parts.columns,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: parts.description,
              required: ['spec'],
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec: plain(parts.spec),
                status: parts.nullableStatus ? { ...status, nullable: true } : status,
              },
            },
          },
        },
      ],
    },
  };
}

/** All five CRDs, in {@link KINDS} order. */
export function buildCrds(): readonly CustomResourceDefinition[] {
  return KINDS.map(buildCrd);
}

/** File name of a kind's CRD under deploy/crds/. */
export function crdFileName(kind: Kind): string {
  return `${KIND_NAMES[kind].plural}.${GROUP}.yaml`;
}

/** Renders a CRD exactly as checked in under deploy/crds/. */
export function renderCrdYaml(crd: CustomResourceDefinition): string {
  const header =
    '# Generated by tools/gen-crds.ts from libs/kube/src/crds (npm run gen:crds). Do not edit by hand.\n';
  return header + stringify(crd, { lineWidth: 0, aliasDuplicateObjects: false });
}
