// The plugin's only way to the cluster: @kubernetes/client-node with the kubeconfig chosen as kubectl
// chooses it (--kubeconfig, $KUBECONFIG, ~/.kube/config; --context; -n or the context's namespace; --as,
// --as-group), and the API's refusals turned into one line that names the object and quotes the API.
import {
  ApiException,
  AuthenticationV1Api,
  CoreV1Api,
  createConfiguration,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  ServerConfiguration,
  setHeaderOptions,
  type Configuration,
  type V1ConfigMap,
} from '@kubernetes/client-node';
import { API_VERSION, GROUP, KIND_NAMES, VERSION, type Kind } from '@rolepolicy/kube';

import { CliError, EXIT } from '../io.js';

/** kubectl's connection flags, as every cluster command takes them. */
export interface KubeOptions {
  readonly kubeconfig?: string;
  readonly context?: string;
  readonly namespace?: string;
  readonly allNamespaces?: boolean;
  readonly as?: string;
  readonly asGroup?: readonly string[];
}

/** A custom object as read from the API (the typed kinds of @rolepolicy/kube narrow it). */
export interface KubeObject {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata: {
    readonly name?: string;
    readonly namespace?: string;
    readonly uid?: string;
    readonly resourceVersion?: string;
    readonly creationTimestamp?: string;
    readonly annotations?: Readonly<Record<string, string>>;
    readonly labels?: Readonly<Record<string, string>>;
    readonly ownerReferences?: readonly {
      readonly uid: string;
      readonly kind: string;
      readonly name: string;
    }[];
  };
  readonly spec?: unknown;
  readonly status?: unknown;
}

const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** `-o name` prefix of a kind: `postgrespolicyplan.rolepolicy.io`. */
export function resourceName(kind: Kind): string {
  return `${KIND_NAMES[kind].singular}.${GROUP}`;
}

function firstLine(error: unknown): string {
  return error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error);
}

/** The API's own message of a refusal (Status.message), else the HTTP code. */
export function apiMessage(error: ApiException<unknown>): string {
  let body: unknown = error.body;
  if (typeof body === 'string') {
    try {
      body = JSON.parse(body);
    } catch {
      body = null;
    }
  }
  const message = (body as { message?: unknown } | null)?.message;
  return typeof message === 'string' && message !== '' ? message : `HTTP ${error.code}`;
}

/**
 * One line for a failed call on `what` (e.g. `postgrespolicyplan "team/shop-3f2c"`): not found,
 * forbidden, invalid and conflict are refusals (exit 3) quoting the API; anything else is an error (exit 1).
 */
export function describeApiError(what: string, error: unknown): CliError {
  if (error instanceof CliError) return error;
  if (error instanceof ApiException) {
    const code = (error as ApiException<unknown>).code;
    const message = apiMessage(error as ApiException<unknown>);
    switch (code) {
      case 404:
        return new CliError(`${what} not found`, EXIT.refused);
      case 401:
        return new CliError(
          `${what}: unauthorized (the API did not accept the kubeconfig's credentials): ${message}`,
          EXIT.refused,
        );
      case 403:
        return new CliError(`${what}: forbidden: ${message}`, EXIT.refused);
      case 409:
        return new CliError(`${what}: conflict: ${message}`, EXIT.refused);
      case 422:
        return new CliError(`${what}: refused by the API: ${message}`, EXIT.refused);
      default:
        return new CliError(`${what}: the API answered ${code}: ${message}`);
    }
  }
  return new CliError(`${what}: cannot reach the API server: ${firstLine(error)}`);
}

/** The cluster as the plugin talks to it: one namespace (or all), typed reads and status writes. */
export class Cluster {
  readonly custom: CustomObjectsApi;
  readonly core: CoreV1Api;
  readonly authentication: AuthenticationV1Api;

  constructor(
    readonly kubeConfig: KubeConfig,
    /** The namespace of every namespaced call. */
    readonly namespace: string,
    /** -A: listings span every namespace. */
    readonly allNamespaces: boolean,
    /** --as / --as-group, sent as impersonation headers (the API decides whether the caller may). */
    readonly impersonation: { readonly user?: string; readonly groups: readonly string[] },
  ) {
    const config = this.configuration();
    this.custom = new CustomObjectsApi(config);
    this.core = new CoreV1Api(config);
    this.authentication = new AuthenticationV1Api(config);
  }

  private configuration(): Configuration {
    const cluster = this.kubeConfig.getCurrentCluster();
    if (!cluster) throw new CliError('the kubeconfig has no current cluster (set a context with --context)');
    const { user, groups } = this.impersonation;
    return createConfiguration({
      baseServer: new ServerConfiguration(cluster.server, {}),
      authMethods: { default: this.kubeConfig },
      promiseMiddleware: [
        {
          pre: async (context) => {
            if (user !== undefined) context.setHeaderParam('Impersonate-User', user);
            if (groups[0] !== undefined) context.setHeaderParam('Impersonate-Group', groups[0]);
            return context;
          },
          post: async (response) => response,
        },
      ],
    });
  }

  /** How an object is named in messages: `<singular> "<namespace>/<name>"`. */
  describe(kind: Kind, name: string, namespace = this.namespace): string {
    return `${KIND_NAMES[kind].singular} "${namespace}/${name}"`;
  }

  private coords(kind: Kind, namespace = this.namespace) {
    return { group: GROUP, version: VERSION, plural: KIND_NAMES[kind].plural, namespace };
  }

  /** Reads one object; a missing one is a refusal naming it (exit 3). */
  async get<T extends KubeObject>(kind: Kind, name: string): Promise<T> {
    try {
      return (await this.custom.getNamespacedCustomObject({ ...this.coords(kind), name })) as T;
    } catch (error) {
      throw describeApiError(this.describe(kind, name), error);
    }
  }

  /** Every object of a kind in the namespace, or in all namespaces with -A. */
  async list<T extends KubeObject>(kind: Kind): Promise<T[]> {
    try {
      const list = (
        this.allNamespaces
          ? await this.custom.listClusterCustomObject({
              group: GROUP,
              version: VERSION,
              plural: KIND_NAMES[kind].plural,
            })
          : await this.custom.listNamespacedCustomObject(this.coords(kind))
      ) as { items?: T[] };
      return list.items ?? [];
    } catch (error) {
      const where = this.allNamespaces ? 'all namespaces' : `namespace "${this.namespace}"`;
      throw describeApiError(`${KIND_NAMES[kind].plural} in ${where}`, error);
    }
  }

  /** Creates an object of `kind` (name or generateName in `metadata`). */
  async create<T extends KubeObject>(
    kind: Kind,
    metadata: Record<string, unknown>,
    spec: unknown,
  ): Promise<T> {
    const name = String(metadata['name'] ?? metadata['generateName'] ?? '');
    try {
      return (await this.custom.createNamespacedCustomObject({
        ...this.coords(kind),
        body: { apiVersion: API_VERSION, kind, metadata: { ...metadata, namespace: this.namespace }, spec },
      })) as T;
    } catch (error) {
      throw describeApiError(this.describe(kind, name), error);
    }
  }

  /** A merge patch of the /status subresource (the body carries metadata.resourceVersion as a precondition). */
  async patchStatus<T extends KubeObject>(kind: Kind, name: string, body: object): Promise<T> {
    return (await this.custom.patchNamespacedCustomObjectStatus(
      { ...this.coords(kind), name, body },
      MERGE,
    )) as T;
  }

  /** A merge patch of the object itself (metadata, e.g. an annotation). */
  async patch<T extends KubeObject>(kind: Kind, name: string, body: object): Promise<T> {
    try {
      return (await this.custom.patchNamespacedCustomObject(
        { ...this.coords(kind), name, body },
        MERGE,
      )) as T;
    } catch (error) {
      throw describeApiError(this.describe(kind, name), error);
    }
  }

  /** A ConfigMap of the namespace, or undefined when it does not exist. */
  async configMap(name: string): Promise<V1ConfigMap | undefined> {
    try {
      return await this.core.readNamespacedConfigMap({ namespace: this.namespace, name });
    } catch (error) {
      if (error instanceof ApiException && error.code === 404) return undefined;
      throw describeApiError(`configmap "${this.namespace}/${name}"`, error);
    }
  }
}

/** Loads the kubeconfig as kubectl does and binds the namespace; bad flags are usage errors (exit 2). */
export function connectCluster(options: KubeOptions): Cluster {
  const kc = new KubeConfig();
  try {
    if (options.kubeconfig !== undefined) kc.loadFromFile(options.kubeconfig);
    else kc.loadFromDefault();
  } catch (error) {
    throw new CliError(
      `--kubeconfig: cannot load ${options.kubeconfig ?? 'the default kubeconfig ($KUBECONFIG or ~/.kube/config)'}: ${firstLine(error)}`,
      EXIT.usage,
    );
  }
  if (options.context !== undefined) {
    if (!kc.getContextObject(options.context)) {
      throw new CliError(`--context: the kubeconfig has no context "${options.context}"`, EXIT.usage);
    }
    kc.setCurrentContext(options.context);
  }
  const groups = options.asGroup ?? [];
  if (groups.length > 1) {
    throw new CliError('--as-group: give at most one group (one Impersonate-Group header)', EXIT.usage);
  }
  if (groups.length > 0 && options.as === undefined) {
    throw new CliError(
      '--as-group: requires --as (the API refuses group impersonation without a user)',
      EXIT.usage,
    );
  }
  const contextNamespace = kc.getContextObject(kc.getCurrentContext())?.namespace;
  const namespace = options.namespace ?? contextNamespace ?? 'default';
  return new Cluster(kc, namespace, options.allNamespaces === true, { user: options.as, groups });
}
