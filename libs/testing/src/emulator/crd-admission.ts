// Admission for custom resources through the project's own engine (@rolepolicy/kube `admit`):
// pruning, defaults, structural schema and CEL rules from the CRD, with the API server's 422 body; and
// for admission policies, that their CEL compiles.
import {
  admit,
  fieldErrorBody,
  policyExpressionErrors,
  type CustomResourceDefinition,
} from '@rolepolicy/kube';
import type { AdmissionHook, KubeObject, StatusBody } from './types.js';

/**
 * The admission hook the emulator uses by default: custom resources go through `admit` with the
 * CRD they were installed from; built-in kinds are accepted as sent.
 */
export function crdAdmission(): AdmissionHook {
  return (request) => {
    const crd = request.resource.crd;
    if (!crd) {
      // Admission policies whose CEL does not compile are refused, as the API server's validation does.
      const errors = policyExpressionErrors(request.resource.kind, request.object['spec']);
      if (errors.length === 0) return { allowed: true };
      const causes = errors.map((e) => ({ field: e.field, message: fieldErrorBody(e), reason: e.type }));
      return { allowed: false, causes };
    }
    const result = admit({
      crd: crd as unknown as CustomResourceDefinition,
      operation: request.operation,
      object: request.object,
      oldObject: request.oldObject,
      ...(request.subresource === 'status' ? { subresource: 'status' as const } : {}),
    });
    if (result.allowed) return { allowed: true, object: result.object as unknown as KubeObject };
    return { allowed: false, status: result.status as unknown as StatusBody };
  };
}
