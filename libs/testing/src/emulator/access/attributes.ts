// What a request asks to do, in authorization terms, derived from its method and path as
// kube-apiserver's RequestInfoFactory does: `/api/v1/...` and `/apis/<g>/<v>/...` below the version
// are resource requests (verb from the method, namespace, resource, name, subresource); everything else
// (`/api`, `/apis/<g>/<v>`, `/version`, `/openapi/v3`, `/healthz`) is a non-resource path whose verb is
// the lower-case HTTP method.

/** A request's verb and target; `resource` undefined means a non-resource request on `path`. */
export type RequestTarget = {
  readonly verb: string;
  readonly path: string;
  readonly resource?: {
    readonly group: string;
    readonly version: string;
    readonly resource: string;
    readonly subresource: string;
    readonly namespace: string;
    readonly name: string;
  };
};

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

/** The verb and target of `method path?query`. */
export function requestTarget(method: string, pathname: string, query: URLSearchParams): RequestTarget {
  const parts = pathname
    .split('/')
    .filter((s) => s.length > 0)
    .map(decodeURIComponent);
  const lower = method.toLowerCase();
  let rest: string[];
  let group: string;
  let version: string;
  if (parts[0] === 'api' && parts.length >= 3) {
    [group, version, rest] = ['', parts[1]!, parts.slice(2)];
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    [group, version, rest] = [parts[1]!, parts[2]!, parts.slice(3)];
  } else {
    return { verb: lower, path: pathname };
  }
  let namespace = '';
  if (rest[0] === 'namespaces' && rest.length > 1) {
    namespace = rest[1]!;
    if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2]!)) rest = rest.slice(2);
  }
  const [resource = '', name = '', subresource = ''] = rest;
  let verb: string;
  switch (method) {
    case 'POST':
      verb = 'create';
      break;
    case 'PUT':
      verb = 'update';
      break;
    case 'PATCH':
      verb = 'patch';
      break;
    case 'DELETE':
      verb = name === '' ? 'deletecollection' : 'delete';
      break;
    case 'GET':
    case 'HEAD': {
      const watch = query.get('watch') === 'true' || query.get('watch') === '1';
      verb = watch ? 'watch' : name === '' ? 'list' : 'get';
      break;
    }
    default:
      verb = lower;
  }
  // A list or watch of one object by field selector is authorized on that name, as upstream.
  let target = name;
  if ((verb === 'list' || verb === 'watch') && name === '') {
    const byName = /(?:^|,)metadata\.name==?([^,]+)/.exec(query.get('fieldSelector') ?? '');
    if (byName) target = byName[1]!;
  }
  return {
    verb,
    path: pathname,
    resource: { group, version, resource, subresource, namespace, name: target },
  };
}
