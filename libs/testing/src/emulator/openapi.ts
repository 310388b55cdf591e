// A minimal OpenAPI v3 index: kubectl reads it to learn that the server validates fields itself
// (the `fieldValidation` PATCH parameter) and, for `kubectl explain`, each CRD version's schema.
import type { JsonObject, ResourceType } from './types.js';

function gvPath(type: Pick<ResourceType, 'group' | 'version'>): string {
  return type.group === '' ? `api/${type.version}` : `apis/${type.group}/${type.version}`;
}

/** `/openapi/v3`: one entry per served group-version. */
export function openApiRoot(types: readonly ResourceType[]): JsonObject {
  const paths: JsonObject = {};
  for (const t of types) paths[gvPath(t)] = { serverRelativeURL: `/openapi/v3/${gvPath(t)}` };
  return { paths };
}

/** The CRD version's openAPIV3Schema tagged with its kind, as `kubectl explain` looks it up. */
function crdSchema(t: ResourceType): JsonObject | undefined {
  const spec = t.crd?.['spec'] as JsonObject | undefined;
  const versions = Array.isArray(spec?.['versions']) ? (spec['versions'] as JsonObject[]) : [];
  const version = versions.find((v) => v['name'] === t.version);
  const schema = (version?.['schema'] as JsonObject | undefined)?.['openAPIV3Schema'];
  if (typeof schema !== 'object' || schema === null) return undefined;
  return {
    ...(schema as JsonObject),
    'x-kubernetes-group-version-kind': [{ group: t.group, version: t.version, kind: t.kind }],
  };
}

/** OpenAPI component name of a kind: reversed group, version, kind (`io.rolepolicy.v1alpha1.X`). */
function componentName(t: ResourceType): string {
  const group = t.group === '' ? 'io.k8s.api.core' : t.group.split('.').reverse().join('.');
  return `${group}.${t.version}.${t.kind}`;
}

/** `/openapi/v3/<api|apis/group>/<version>`: PATCH operations tagged with their kind. */
export function openApiGroupVersion(types: readonly ResourceType[], path: string): JsonObject | undefined {
  const served = types.filter((t) => gvPath(t) === path);
  if (served.length === 0) return undefined;
  const paths: JsonObject = {};
  const schemas: JsonObject = {};
  for (const t of served) {
    const schema = crdSchema(t);
    if (schema !== undefined) schemas[componentName(t)] = schema;
    const prefix = `/${gvPath(t)}${t.namespaced ? '/namespaces/{namespace}' : ''}/${t.plural}/{name}`;
    const operation = (suffix: string) => ({
      patch: {
        operationId: `patch${t.kind}${suffix}`,
        'x-kubernetes-action': 'patch',
        'x-kubernetes-group-version-kind': { group: t.group, version: t.version, kind: t.kind },
        parameters: [
          { name: 'dryRun', in: 'query', schema: { type: 'string' } },
          { name: 'fieldManager', in: 'query', schema: { type: 'string' } },
          { name: 'fieldValidation', in: 'query', schema: { type: 'string' } },
        ],
        responses: { '200': { description: 'OK' } },
      },
    });
    paths[prefix] = operation('');
    if (t.statusSubresource) paths[`${prefix}/status`] = operation('Status');
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: 'v1.32.0' },
    paths,
    components: { schemas },
  };
}
