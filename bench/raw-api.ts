// Plain JSON requests to the API over client-node's own transport (its authentication and fetch library, one
// keep-alive agent), as the k8s-gateway sends its writes (apps/k8s-gateway/src/gateway/raw-objects.ts and
// connection-reuse.ts): the least client work a write through @kubernetes/client-node can cost.
import http from 'node:http';
import https from 'node:https';

import { GROUP, VERSION } from '@rolepolicy/kube';
import {
  HttpMethod,
  IsomorphicFetchHttpLibrary,
  RequestContext,
  type KubeConfig,
} from '@kubernetes/client-node';

/** The collection path of a resource in a namespace: rolepolicy.io kinds by their group, others core v1. */
export function collectionPath(resource: string, namespace: string): string {
  const base =
    resource.startsWith('postgrespolic') || resource.startsWith('ephemeralaccess')
      ? `/apis/${GROUP}/${VERSION}`
      : '/api/v1';
  return `${base}/namespaces/${encodeURIComponent(namespace)}/${resource}`;
}

/** Requests about objects, JSON in and out, over one keep-alive connection pool. */
export class RawApi {
  private readonly http = new IsomorphicFetchHttpLibrary();
  private agent: http.Agent | undefined;

  constructor(private readonly kc: KubeConfig) {}

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
    this.agent ??= keepAlive(context.getAgent());
    if (this.agent !== undefined) context.setAgent(this.agent);
    const response = await this.http.send(context).toPromise();
    const text = await response.body.text();
    if (response.httpStatusCode < 200 || response.httpStatusCode > 299)
      throw new Error(`${method} ${path}: ${response.httpStatusCode} ${text.slice(0, 300)}`);
    return JSON.parse(text) as T;
  }

  post<T>(path: string, body: unknown): Promise<T> {
    return this.request(HttpMethod.POST, path, body);
  }

  put<T>(path: string, body: unknown): Promise<T> {
    return this.request(HttpMethod.PUT, path, body);
  }

  get<T>(path: string): Promise<T> {
    return this.request(HttpMethod.GET, path);
  }
}

/** A keep-alive agent with the TLS settings of the one client-node built for a request. */
function keepAlive(fresh: http.Agent | undefined): http.Agent | undefined {
  if (fresh === undefined) return undefined;
  const options = (fresh as unknown as { options?: https.AgentOptions }).options ?? {};
  return fresh instanceof https.Agent
    ? new https.Agent({ ...options, keepAlive: true })
    : new http.Agent({ ...(options as http.AgentOptions), keepAlive: true });
}
