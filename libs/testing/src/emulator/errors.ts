// API-server-shaped failures: every rejection leaves the emulator as a Status body with the same
// reason, code and message wording kube-apiserver uses, because clients branch on them.
import type { AdmissionCause, ResourceType, StatusBody } from './types.js';

/** An error that the HTTP layer turns into its Status body verbatim. */
export class ApiError extends Error {
  constructor(readonly status: StatusBody) {
    super(status.message ?? status.reason ?? 'error');
  }
}

/** `secrets` or `postgrespolicies.rolepolicy.io`, the qualified resource in API-server messages. */
export function qualifiedResource(type: ResourceType): string {
  return type.group === '' ? type.plural : `${type.plural}.${type.group}`;
}

/** `PostgresPolicy.rolepolicy.io` or `Secret`, the qualified kind used in Invalid messages. */
export function qualifiedKind(type: ResourceType): string {
  return type.group === '' ? type.kind : `${type.kind}.${type.group}`;
}

function failure(code: number, reason: string, message: string, details?: Record<string, unknown>): ApiError {
  const body: StatusBody = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    ...(details ? { details } : {}),
    code,
  };
  return new ApiError(body);
}

/** 404 for a missing object. */
export function notFound(type: ResourceType, name: string): ApiError {
  return failure(404, 'NotFound', `${qualifiedResource(type)} "${name}" not found`, {
    name,
    group: type.group,
    kind: type.plural,
  });
}

/** 404 for a path that names no served resource. */
export function pathNotFound(path: string): ApiError {
  return failure(404, 'NotFound', `the server could not find the requested resource (${path})`, {});
}

/** 409 AlreadyExists on create of an existing name. */
export function alreadyExists(type: ResourceType, name: string): ApiError {
  return failure(409, 'AlreadyExists', `${qualifiedResource(type)} "${name}" already exists`, {
    name,
    group: type.group,
    kind: type.plural,
  });
}

/** 409 Conflict on a stale resourceVersion or failed precondition. */
export function conflict(type: ResourceType, name: string, why?: string): ApiError {
  const reason =
    why ?? 'the object has been modified; please apply your changes to the latest version and try again';
  return failure(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualifiedResource(type)} "${name}": ${reason}`,
    {
      name,
      group: type.group,
      kind: type.plural,
    },
  );
}

/** 422 Invalid with field causes, worded as `<Kind> "<name>" is invalid: <field>: <message>`. */
export function invalid(type: ResourceType, name: string, causes: readonly AdmissionCause[]): ApiError {
  const parts = causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message));
  const summary = parts.length === 1 ? parts[0]! : `[${parts.join(', ')}]`;
  return failure(422, 'Invalid', `${qualifiedKind(type)} "${name}" is invalid: ${summary}`, {
    name,
    group: type.group,
    kind: type.kind,
    causes: causes.map((c) => ({
      reason: c.reason ?? 'FieldValueInvalid',
      message: c.message,
      field: c.field,
    })),
  });
}

/** 400 BadRequest for malformed input. */
export function badRequest(message: string): ApiError {
  return failure(400, 'BadRequest', message);
}

/** 405 for a verb the resource does not support. */
export function methodNotAllowed(message: string): ApiError {
  return failure(405, 'MethodNotAllowed', message);
}

/** 415 for a patch type the emulator does not implement. */
export function unsupportedMediaType(contentType: string): ApiError {
  return failure(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml (got ${contentType})`,
  );
}

/** 403 for writes into a namespace that is being deleted. */
export function namespaceTerminating(type: ResourceType, name: string, namespace: string): ApiError {
  return failure(
    403,
    'Forbidden',
    `${qualifiedResource(type)} "${name}" is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`,
    { name, group: type.group, kind: type.plural },
  );
}

/** The 410 Status a watch receives for a resourceVersion older than the kept history. */
export function expired(requested: number, oldest: number): StatusBody {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `too old resource version: ${requested} (${oldest})`,
    reason: 'Expired',
    code: 410,
  };
}

/** What an authorization failure names: a resource request or a non-resource path. */
export type ForbiddenTarget = {
  readonly verb: string;
  readonly path?: string;
  readonly resource?: {
    readonly group: string;
    readonly resource: string;
    readonly subresource?: string;
    readonly namespace?: string;
    readonly name?: string;
  };
};

/**
 * 403 as the API server's authorization filter words it:
 * `<resource>.<group> "<name>" is forbidden: User "<u>" cannot <verb> resource "<res>/<sub>" in API group
 * "<g>" in the namespace "<ns>"` (or `at the cluster scope`; `forbidden: User "<u>" cannot get path "/x"`).
 */
export function forbidden(target: ForbiddenTarget, username: string, reason = ''): ApiError {
  const r = target.resource;
  let why: string;
  if (!r) why = `User "${username}" cannot ${target.verb} path "${target.path ?? ''}"`;
  else {
    const resource = r.subresource ? `${r.resource}/${r.subresource}` : r.resource;
    const scope = r.namespace ? `in the namespace "${r.namespace}"` : 'at the cluster scope';
    why = `User "${username}" cannot ${target.verb} resource "${resource}" in API group "${r.group}" ${scope}`;
  }
  if (reason !== '') why = `${why}: ${reason}`;
  const qualified = !r ? '' : r.group === '' ? r.resource : `${r.resource}.${r.group}`;
  const name = r?.name ?? '';
  const message =
    qualified === ''
      ? `forbidden: ${why}`
      : name === ''
        ? `${qualified} is forbidden: ${why}`
        : `${qualified} "${name}" is forbidden: ${why}`;
  return failure(403, 'Forbidden', message, {
    ...(name ? { name } : {}),
    group: r?.group ?? '',
    kind: r?.resource ?? '',
  });
}
