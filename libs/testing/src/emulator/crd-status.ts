// What the emulator checks and records for a CustomResourceDefinition: the name rule and the
// Established/NamesAccepted status the API server sets once the names are accepted.
import { ApiError, invalid } from './errors.js';
import { typesFromCrd } from './resource-types.js';
import { clone, isObject, timestamp } from './object-rules.js';
import type { JsonObject, KubeObject, ResourceType } from './types.js';

/** Rejects a CRD whose name is not `<plural>.<group>` or whose names/versions are unusable. */
export function checkCrd(type: ResourceType, crd: KubeObject): void {
  const spec = isObject(crd['spec']) ? crd['spec'] : {};
  const names = isObject(spec['names']) ? spec['names'] : {};
  const expected = `${String(names['plural'])}.${String(spec['group'])}`;
  if (crd.metadata.name !== expected) {
    throw invalid(type, crd.metadata.name ?? '', [
      {
        field: 'metadata.name',
        message: `Invalid value: "${crd.metadata.name}": must be spec.names.plural+"."+spec.group`,
      },
    ]);
  }
  try {
    typesFromCrd(crd);
  } catch (error) {
    if (error instanceof ApiError)
      throw invalid(type, crd.metadata.name, [{ field: 'spec', message: error.message }]);
    throw error;
  }
}

/** Status of an accepted CRD. */
export function crdStatus(crd: KubeObject): JsonObject {
  const spec = crd['spec'] as JsonObject;
  const versions = (spec['versions'] as JsonObject[]) ?? [];
  const storage = versions.find((v) => v['storage'] === true) ?? versions[0];
  const now = timestamp();
  return {
    acceptedNames: clone(spec['names']),
    conditions: [
      {
        type: 'NamesAccepted',
        status: 'True',
        reason: 'NoConflicts',
        message: 'no conflicts found',
        lastTransitionTime: now,
      },
      {
        type: 'Established',
        status: 'True',
        reason: 'InitialNamesAccepted',
        message: 'the initial names have been accepted',
        lastTransitionTime: now,
      },
    ],
    storedVersions: storage ? [storage['name']] : [],
  };
}
