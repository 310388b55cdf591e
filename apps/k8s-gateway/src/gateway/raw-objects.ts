// The applier's requests as plain JSON over client-node's own transport: the KubeConfig's authentication and
// agent (connection-reuse.ts) and client-node's fetch library, without its ObjectSerializer, which walks
// every object against the generated models on the way out and in (a typed ConfigMap or Event is copied
// field by field twice per request) and without the generated clients' promise middleware. Objects of the
// kinds the gateway watches go this way (their paths are known without discovery); any other kind goes
// through KubernetesObjectApi as before. Failures are the same ApiException the generated clients throw
// (status code, the API's body as text), so the applier's outcomes do not change.
import {
  ApiException,
  HttpMethod,
  IsomorphicFetchHttpLibrary,
  KubernetesObjectApi,
  RequestContext,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { watchedKindOf } from './watched-kinds.js';

/** Names one object: apiVersion, kind, namespace and name. */
export type ObjectHeader = {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace: string };
};

/** The URL path of an object's collection, or undefined for a kind the gateway does not watch. */
function collectionPath(o: KubernetesObject): string | undefined {
  const watched = o.kind === undefined ? undefined : watchedKindOf(o.kind);
  const namespace = o.metadata?.namespace;
  if (watched === undefined || watched.apiVersion !== o.apiVersion || !namespace) return undefined;
  const base = watched.group === '' ? `/api/${watched.version}` : `/apis/${watched.group}/${watched.version}`;
  return `${base}/namespaces/${encodeURIComponent(namespace)}/${watched.plural}`;
}

/** Requests about objects, JSON in and out. */
export class RawObjects {
  private readonly http = new IsomorphicFetchHttpLibrary();
  /** client-node's generic client: other kinds, and deletes. */
  readonly objects: KubernetesObjectApi;

  constructor(private readonly kc: KubeConfig) {
    this.objects = KubernetesObjectApi.makeApiClient(kc);
  }

  /** One request; resolves with the parsed answer, rejects with ApiException as the generated clients do. */
  async request<T>(method: HttpMethod, path: string, body?: unknown): Promise<T> {
    const server = this.kc.getCurrentCluster()?.server;
    if (server === undefined) throw new Error('the kubeconfig has no current cluster');
    const context = new RequestContext(`${server}${path}`, method);
    context.setHeaderParam('Accept', 'application/json');
    if (body !== undefined) {
      context.setHeaderParam('Content-Type', 'application/json');
      context.setBody(JSON.stringify(body));
    }
    await this.kc.applySecurityAuthentication(context);
    const response = await this.http.send(context).toPromise();
    const code = response.httpStatusCode;
    if (code >= 200 && code <= 299) return JSON.parse(await response.body.text()) as T;
    if (code === 401) throw new ApiException(code, 'Unauthorized', undefined, response.headers);
    throw new ApiException(code, 'Unknown API Status Code!', await response.body.text(), response.headers);
  }

  private objectPath(o: KubernetesObject, sub = ''): string | undefined {
    const collection = collectionPath(o);
    const name = o.metadata?.name;
    return collection === undefined || !name ? undefined : `${collection}/${encodeURIComponent(name)}${sub}`;
  }

  /** GET of one object. */
  read(o: ObjectHeader): Promise<KubernetesObject> {
    const path = this.objectPath(o);
    return path === undefined ? this.objects.read(o) : this.request(HttpMethod.GET, path);
  }

  /** POST of a new object. */
  create(o: KubernetesObject): Promise<KubernetesObject> {
    const path = collectionPath(o);
    return path === undefined ? this.objects.create(o) : this.request(HttpMethod.POST, path, o);
  }

  /** PUT of a whole object (its metadata.resourceVersion is the precondition). */
  replace(o: KubernetesObject): Promise<KubernetesObject> {
    const path = this.objectPath(o);
    return path === undefined ? this.objects.replace(o) : this.request(HttpMethod.PUT, path, o);
  }

  /** PUT of the status subresource of object `o` with `body` (the whole object, its status changed). */
  replaceStatus(o: ObjectHeader, body: object): Promise<KubernetesObject> {
    const path = this.objectPath(o, '/status');
    if (path === undefined) throw new Error(`${o.kind} ${o.apiVersion} has no status the gateway writes`);
    return this.request(HttpMethod.PUT, path, body);
  }
}
