// The kinds the emulator serves: a fixed set of built-ins plus whatever CustomResourceDefinitions
// are installed (from deploy/crds at start or created through the API, as `kubectl apply` does).
import { badRequest } from './errors.js';
import type { JsonObject, KubeObject, PrinterColumn, ResourceType } from './types.js';
import { ACCESS_TYPES } from './access/access-types.js';
import { AGE, builtin } from './builtin-type.js';

/** Built-in kinds the project's services and kubectl touch. */
export const BUILTIN_TYPES: readonly ResourceType[] = [
  builtin({
    group: '',
    version: 'v1',
    kind: 'Namespace',
    plural: 'namespaces',
    singular: 'namespace',
    namespaced: false,
    shortNames: ['ns'],
    statusSubresource: true,
    printerColumns: [{ name: 'Status', type: 'string', jsonPath: '.status.phase' }, AGE],
  }),
  builtin({
    group: '',
    version: 'v1',
    kind: 'Secret',
    plural: 'secrets',
    singular: 'secret',
    namespaced: true,
    statusSubresource: false,
    printerColumns: [{ name: 'Type', type: 'string', jsonPath: '.type' }, AGE],
  }),
  builtin({
    group: '',
    version: 'v1',
    kind: 'ConfigMap',
    plural: 'configmaps',
    singular: 'configmap',
    namespaced: true,
    shortNames: ['cm'],
    statusSubresource: false,
    printerColumns: [AGE],
  }),
  builtin({
    group: '',
    version: 'v1',
    kind: 'Event',
    plural: 'events',
    singular: 'event',
    namespaced: true,
    shortNames: ['ev'],
    statusSubresource: false,
    printerColumns: [
      { name: 'Type', type: 'string', jsonPath: '.type' },
      { name: 'Reason', type: 'string', jsonPath: '.reason' },
      { name: 'Object', type: 'string', jsonPath: '.involvedObject.name' },
      { name: 'Message', type: 'string', jsonPath: '.message' },
    ],
  }),
  builtin({
    group: '',
    version: 'v1',
    kind: 'ServiceAccount',
    plural: 'serviceaccounts',
    singular: 'serviceaccount',
    namespaced: true,
    shortNames: ['sa'],
    statusSubresource: false,
    printerColumns: [AGE],
  }),
  builtin({
    group: 'coordination.k8s.io',
    version: 'v1',
    kind: 'Lease',
    plural: 'leases',
    singular: 'lease',
    namespaced: true,
    statusSubresource: false,
    printerColumns: [{ name: 'Holder', type: 'string', jsonPath: '.spec.holderIdentity' }, AGE],
  }),
  builtin({
    group: 'apiextensions.k8s.io',
    version: 'v1',
    kind: 'CustomResourceDefinition',
    plural: 'customresourcedefinitions',
    singular: 'customresourcedefinition',
    namespaced: false,
    shortNames: ['crd', 'crds'],
    statusSubresource: true,
    tracksGeneration: true,
    printerColumns: [{ name: 'Created At', type: 'date', jsonPath: '.metadata.creationTimestamp' }],
  }),
  ...ACCESS_TYPES,
];

function asObject(value: unknown, what: string): JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw badRequest(`CustomResourceDefinition: ${what} must be an object`);
  }
  return value as JsonObject;
}

function asString(value: unknown, what: string): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw badRequest(`CustomResourceDefinition: ${what} is required`);
  }
  return value;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** One resource type per served version of a CRD (storage is shared across versions). */
export function typesFromCrd(crd: KubeObject): ResourceType[] {
  const spec = asObject(crd['spec'], 'spec');
  const names = asObject(spec['names'], 'spec.names');
  const group = asString(spec['group'], 'spec.group');
  const kind = asString(names['kind'], 'spec.names.kind');
  const plural = asString(names['plural'], 'spec.names.plural');
  const versions = Array.isArray(spec['versions']) ? (spec['versions'] as JsonObject[]) : [];
  return versions
    .filter((v) => v['served'] !== false)
    .map((v) => {
      const subresources = (v['subresources'] ?? {}) as JsonObject;
      const columns = Array.isArray(v['additionalPrinterColumns'])
        ? (v['additionalPrinterColumns'] as PrinterColumn[])
        : [AGE];
      return {
        group,
        version: asString(v['name'], 'spec.versions[].name'),
        kind,
        listKind: typeof names['listKind'] === 'string' ? names['listKind'] : `${kind}List`,
        plural,
        singular: typeof names['singular'] === 'string' ? names['singular'] : kind.toLowerCase(),
        namespaced: spec['scope'] !== 'Cluster',
        shortNames: strings(names['shortNames']),
        categories: strings(names['categories']),
        statusSubresource: subresources['status'] !== undefined,
        tracksGeneration: true,
        custom: true,
        printerColumns: columns,
        crd,
      };
    });
}

/** Storage key shared by every version of one resource. */
export function storageKey(type: Pick<ResourceType, 'group' | 'plural'>): string {
  return `${type.group}/${type.plural}`;
}

/** `rolepolicy.io/v1alpha1` or `v1`. */
export function apiVersionOf(type: Pick<ResourceType, 'group' | 'version'>): string {
  return type.group === '' ? type.version : `${type.group}/${type.version}`;
}
