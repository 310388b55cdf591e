// A pass-through proxy in front of the Kubernetes API (the emulator in tests) that records each request
// as the RBAC attributes the API server would authorize it with: verb, API group, resource (with
// subresource), namespace and name; non-resource paths (discovery, /version) separately. It also notes the
// owners that created objects block the deletion of (`blockOwnerDeletion`), which the
// OwnerReferencesPermissionEnforcement admission plugin authorizes apart (`update` on the owner's finalizers).
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** One request as RBAC sees it. */
export type ResourceRequest = {
  readonly verb: string;
  readonly group: string;
  /** `plural` or `plural/subresource`. */
  readonly resource: string;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
};

/**
 * The request attributes of `method path?query`, as kube-apiserver's request-info resolver derives them
 * (a GET of a collection with `watch=true` is `watch`, a DELETE of a collection `deletecollection`).
 * Returns the path itself for non-resource URLs.
 */
export function requestAttributes(method: string, url: string): ResourceRequest | string {
  const { pathname, searchParams } = new URL(url, 'http://api');
  const parts = pathname.split('/').filter((p) => p.length > 0);
  let rest: string[];
  let group: string;
  if (parts[0] === 'api' && parts.length >= 3) {
    group = '';
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    group = parts[1]!;
    rest = parts.slice(3);
  } else {
    return pathname;
  }
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [plural, name, subresource] = rest;
  return {
    verb: verbOf(method, name !== undefined, searchParams),
    group,
    resource: subresource ? `${plural}/${subresource}` : plural!,
    namespace,
    name,
  };
}

function verbOf(method: string, named: boolean, query: URLSearchParams): string {
  const watch = query.get('watch');
  switch (method) {
    case 'GET':
      if (watch === 'true' || watch === '1') return 'watch';
      return named ? 'get' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return named ? 'delete' : 'deletecollection';
    default:
      return method.toLowerCase();
  }
}

/** A running recorder. */
export type ApiRecorder = {
  /** A kubeconfig file that sends a client through the recorder. */
  readonly kubeconfigPath: string;
  /** Resource requests seen since the last {@link ApiRecorder.clear}. */
  readonly requests: ResourceRequest[];
  /** Non-resource paths seen (discovery, /version, /openapi). */
  readonly nonResource: Set<string>;
  /**
   * `apiVersion/kind` of every owner a created object names with `blockOwnerDeletion: true` (JSON bodies of
   * creates). Replaces that keep an object's ownerReferences add no blocking reference, so the plugin asks
   * nothing of them.
   */
  readonly blockedOwners: Set<string>;
  /** Where requests go; until set, the recorder answers 503 (an API that is not up yet). */
  setUpstream(url: string): void;
  clear(): void;
  stop(): Promise<void>;
};

/** Starts a recorder on a free loopback port. */
export async function startApiRecorder(): Promise<ApiRecorder> {
  let upstream: URL | undefined;
  const requests: ResourceRequest[] = [];
  const nonResource = new Set<string>();
  const blockedOwners = new Set<string>();
  const server: Server = createServer((req, res) => {
    const url = req.url ?? '/';
    if (!upstream) {
      res.writeHead(503).end();
      return;
    }
    const attributes = requestAttributes(req.method ?? 'GET', url);
    if (typeof attributes === 'string') nonResource.add(attributes);
    else requests.push(attributes);
    if (req.method === 'POST') {
      const body: Buffer[] = [];
      req.on('data', (chunk: Buffer) => body.push(chunk));
      req.on('end', () => noteBlockedOwners(Buffer.concat(body), blockedOwners));
    }
    const forward = httpRequest(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        res.flushHeaders(); // a watch answers its headers before its first event, and clients wait for them
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    res.on('close', () => forward.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const dir = await mkdtemp(join(tmpdir(), 'rp-api-recorder-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  await writeFile(
    kubeconfigPath,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: recorded',
      '  cluster:',
      `    server: http://127.0.0.1:${port}`,
      '    insecure-skip-tls-verify: true',
      'users:',
      '- name: recorded',
      '  user:',
      '    token: recorded',
      'contexts:',
      '- name: recorded',
      '  context:',
      '    cluster: recorded',
      '    user: recorded',
      'current-context: recorded',
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  return {
    kubeconfigPath,
    requests,
    nonResource,
    blockedOwners,
    setUpstream: (url) => {
      upstream = new URL(url);
    },
    clear: () => {
      requests.length = 0;
      nonResource.clear();
      blockedOwners.clear();
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Adds the owners `body` (a created object, when it is JSON) blocks the deletion of. */
function noteBlockedOwners(body: Buffer, owners: Set<string>): void {
  let object: {
    metadata?: { ownerReferences?: { apiVersion?: string; kind?: string; blockOwnerDeletion?: boolean }[] };
  };
  try {
    object = JSON.parse(body.toString('utf8')) as typeof object;
  } catch {
    return; // not JSON (a protobuf body from kubectl): none of the gateway's creates
  }
  for (const ref of object?.metadata?.ownerReferences ?? []) {
    if (ref.blockOwnerDeletion === true) owners.add(`${ref.apiVersion ?? ''}/${ref.kind ?? ''}`);
  }
}
