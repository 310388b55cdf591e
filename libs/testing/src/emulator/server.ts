// The HTTP face of the emulator: routes Kubernetes REST paths to the registry, streams watches as
// newline-delimited JSON and answers discovery, so unmodified clients (client-node, kubectl) work.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { parse as parseYaml } from 'yaml';
import { coreVersions, group, groupList, resourceList, VERSION_INFO } from './discovery.js';
import { openApiGroupVersion, openApiRoot } from './openapi.js';
import { ApiError, badRequest, methodNotAllowed, pathNotFound } from './errors.js';
import { patchTypeOf } from './patch.js';
import {
  decodeProtobuf,
  encodeProtobuf,
  hasProtobuf,
  isProtobuf,
  prefersProtobuf,
  PROTOBUF_CONTENT_TYPE,
} from './protobuf.js';
import type { DeleteOptions, Registry } from './registry.js';
import { parseFieldSelector, parseLabelSelector } from './selectors.js';
import type { ChangeType } from './store.js';
import { TABLE_CONTENT_TYPE, toTable, wantsTable } from './table.js';
import type { JsonObject, KubeObject, ResourceType } from './types.js';
import type { AccessControl } from './access/access-control.js';
import { REVIEW_KINDS } from './access/access-types.js';
import { requestTarget } from './access/attributes.js';
import { answerReview } from './access/reviews.js';
import type { ServingCertificate } from './access/tls.js';

/** Tunables of the HTTP layer. */
export type ServerOptions = {
  /** How often open watches that asked for bookmarks receive one. */
  readonly bookmarkIntervalMs: number;
  /** Called with one line per request, for debugging. */
  readonly log?: (line: string) => void;
  /** Serve HTTPS with this key and certificate (with authentication: clients send tokens only over TLS). */
  readonly tls?: ServingCertificate;
};

/**
 * Awaited before a request is served, outside the write lock: a test can make a concurrent write
 * land between a client's read and its write (a real 409), or delay a request.
 */
export type RequestHook = (request: {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  /** The response's status code, once it is sent (a benchmark counts refused writes apart). */
  readonly responded: Promise<number>;
}) => Promise<void> | void;

type Route = {
  readonly type: ResourceType;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  readonly subresource: '' | 'status';
};

const apiVersion = (type: ResourceType) =>
  type.group === '' ? type.version : `${type.group}/${type.version}`;

function send(res: ServerResponse, code: number, body: unknown, contentType = 'application/json'): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * Answers in the Kubernetes protobuf encoding when the client asked for it first and the body is a
 * core kind that has a message (what kube-apiserver does for client-go's typed clients, e.g. kubectl
 * create/describe); JSON otherwise.
 */
function reply(req: IncomingMessage, res: ServerResponse, code: number, body: unknown): void {
  const object = body as JsonObject;
  if (
    prefersProtobuf(req.headers.accept) &&
    (object['apiVersion'] === 'v1' || object['apiVersion'] === 'rbac.authorization.k8s.io/v1') &&
    hasProtobuf(String(object['kind']))
  ) {
    const bytes = encodeProtobuf(object);
    res.writeHead(code, { 'Content-Type': PROTOBUF_CONTENT_TYPE, 'Content-Length': bytes.length });
    res.end(bytes);
    return;
  }
  send(res, code, body);
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const bytes = Buffer.concat(chunks);
  if (isProtobuf(req.headers['content-type'])) return bytes.length === 0 ? undefined : decodeProtobuf(bytes);
  const text = bytes.toString('utf8').trim();
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    // Server-side apply bodies may be YAML (kubectl sends JSON, which YAML also parses).
    if ((req.headers['content-type'] ?? '').startsWith('application/apply-patch+yaml')) {
      try {
        return parseYaml(text) as unknown;
      } catch {
        throw badRequest('the request body is not valid YAML');
      }
    }
    throw badRequest('the request body is not valid JSON');
  }
}

/** Serves one registry over HTTP; `close()` also ends open watches. */
export class EmulatorServer {
  private readonly server: Server;
  private readonly watches = new Set<() => void>();
  private requestHook: RequestHook | undefined;

  constructor(
    private readonly registry: Registry,
    private readonly access: AccessControl,
    private readonly options: ServerOptions,
  ) {
    const listener = (req: IncomingMessage, res: ServerResponse) => {
      this.handle(req, res).catch((error: unknown) => this.fail(res, error));
    };
    this.server = options.tls ? createTlsServer(options.tls, listener) : createServer(listener);
  }

  /** Starts listening on 127.0.0.1 and returns the base URL. */
  async listen(port: number): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => resolve());
    });
    const address = this.server.address() as AddressInfo;
    return `${this.options.tls ? 'https' : 'http'}://127.0.0.1:${address.port}`;
  }

  /** Ends every watch and closes the listener. */
  async close(): Promise<void> {
    for (const end of [...this.watches]) end();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  /** Sets a hook awaited before each request is served (undefined removes it). */
  setRequestHook(hook: RequestHook | undefined): void {
    this.requestHook = hook;
  }

  /** Ends every open watch stream (clients see the stream close and re-watch). */
  endWatches(): void {
    for (const end of [...this.watches]) end();
  }

  private fail(res: ServerResponse, error: unknown): void {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (error instanceof ApiError) {
      send(res, error.status.code, error.status);
      return;
    }
    const message = error instanceof Error ? error.message : String(error);
    send(res, 500, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message,
      reason: 'InternalError',
      code: 500,
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://emulator');
    const method = req.method ?? 'GET';
    this.options.log?.(
      `${method} ${url.pathname}${url.search} accept=${req.headers.accept ?? ''} ct=${req.headers['content-type'] ?? ''}`,
    );
    if (this.requestHook) {
      const responded = new Promise<number>((resolve) => res.once('close', () => resolve(res.statusCode)));
      await this.requestHook({ method, path: url.pathname, query: url.searchParams, responded });
    }
    // Authentication, impersonation and authorization come before anything else, as upstream.
    const user = this.access.identify(req);
    this.access.check(user, requestTarget(method, url.pathname, url.searchParams));
    const segments = url.pathname
      .split('/')
      .filter((s) => s.length > 0)
      .map(decodeURIComponent);
    const types = this.registry.allTypes();

    if (method === 'GET') {
      const path = url.pathname.replace(/\/$/, '');
      if (path === '/version') return send(res, 200, VERSION_INFO);
      if (['/healthz', '/livez', '/readyz'].includes(path)) {
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        res.end('ok');
        return;
      }
      if (path === '/openapi/v3') return send(res, 200, openApiRoot(types));
      if (path.startsWith('/openapi/v3/')) {
        const doc = openApiGroupVersion(types, path.slice('/openapi/v3/'.length));
        return doc ? send(res, 200, doc) : this.fail(res, pathNotFound(url.pathname));
      }
      if (path === '/api') return send(res, 200, coreVersions(req.headers.host ?? '127.0.0.1'));
      if (path === '/apis') return send(res, 200, groupList(types));
      if (segments[0] === 'apis' && segments.length === 2) {
        const doc = group(types, segments[1]!);
        return doc ? send(res, 200, doc) : this.fail(res, pathNotFound(url.pathname));
      }
      if (
        (segments[0] === 'api' && segments.length === 2) ||
        (segments[0] === 'apis' && segments.length === 3)
      ) {
        const doc =
          segments[0] === 'api'
            ? resourceList(types, '', segments[1]!)
            : resourceList(types, segments[1]!, segments[2]!);
        return doc ? send(res, 200, doc) : this.fail(res, pathNotFound(url.pathname));
      }
    }

    const route = this.route(segments);
    if (!route) throw pathNotFound(url.pathname);
    const query = url.searchParams;
    const dryRun = query.getAll('dryRun').includes('All');
    const strict = query.get('fieldValidation') === 'Strict';
    const { type, namespace, name, subresource } = route;
    if (REVIEW_KINDS.has(type.kind)) {
      if (method !== 'POST' || name !== undefined)
        throw methodNotAllowed(`${type.plural} only supports create`);
      const body = await readBody(req);
      const { rbac, authorize } = this.access;
      const answer = answerReview(type.kind, apiVersion(type), body, user, authorize, rbac, namespace);
      return send(res, 201, answer);
    }
    const warnings: string[] = [];
    const options = { dryRun, strict, user, warnings };
    // Admission warnings (ValidatingAdmissionPolicy Warn) travel as `Warning: 299 - "<text>"` headers.
    const warn = () => {
      if (warnings.length > 0 && !res.headersSent)
        res.setHeader(
          'Warning',
          warnings.map((w) => `299 - ${JSON.stringify(w)}`),
        );
    };

    switch (method) {
      case 'GET': {
        if (query.get('watch') === 'true' || query.get('watch') === '1')
          return this.watch(req, res, route, query);
        if (name === undefined) {
          const list = this.registry.list(
            type,
            namespace,
            parseLabelSelector(query.get('labelSelector')),
            parseFieldSelector(query.get('fieldSelector')),
          );
          if (wantsTable(req.headers.accept)) {
            return send(
              res,
              200,
              toTable(type, list.items, list.resourceVersion, query.get('includeObject')),
              TABLE_CONTENT_TYPE,
            );
          }
          return reply(req, res, 200, {
            apiVersion: type.group === '' ? type.version : `${type.group}/${type.version}`,
            kind: type.listKind,
            metadata: { resourceVersion: list.resourceVersion },
            items: list.items,
          });
        }
        const object = this.registry.get(type, namespace, name);
        if (wantsTable(req.headers.accept) && subresource === '') {
          return send(
            res,
            200,
            toTable(type, [object], object.metadata.resourceVersion ?? '', query.get('includeObject')),
            TABLE_CONTENT_TYPE,
          );
        }
        return reply(req, res, 200, object);
      }
      case 'POST': {
        if (name !== undefined) throw methodNotAllowed(`POST is not supported on a named ${type.kind}`);
        const created = await this.registry.create(type, namespace, await readBody(req), options);
        warn();
        return reply(req, res, 201, created);
      }
      case 'PUT': {
        if (name === undefined) throw methodNotAllowed('PUT requires a name');
        const body = await readBody(req);
        const updated = await this.registry.update(type, namespace, name, body, subresource, options);
        warn();
        return reply(req, res, 200, updated);
      }
      case 'PATCH': {
        if (name === undefined) throw methodNotAllowed('PATCH requires a name');
        const patchType = patchTypeOf(req.headers['content-type']);
        const patched = await this.registry.patch(
          type,
          namespace,
          name,
          patchType,
          await readBody(req),
          subresource,
          options,
        );
        warn();
        return reply(req, res, 200, patched);
      }
      case 'DELETE': {
        const body = (await readBody(req)) as JsonObject | undefined;
        const deleteOptions: DeleteOptions = {
          user,
          warnings,
          dryRun:
            dryRun || (Array.isArray(body?.['dryRun']) && (body['dryRun'] as unknown[]).includes('All')),
          propagationPolicy: (query.get('propagationPolicy') ??
            body?.['propagationPolicy'] ??
            undefined) as DeleteOptions['propagationPolicy'],
          preconditions: body?.['preconditions'] as DeleteOptions['preconditions'],
        };
        if (name === undefined) {
          const list = this.registry.list(
            type,
            namespace,
            parseLabelSelector(query.get('labelSelector')),
            parseFieldSelector(query.get('fieldSelector')),
          );
          const deleted: KubeObject[] = [];
          for (const item of list.items)
            deleted.push(
              (await this.registry.delete(type, item.metadata.namespace, item.metadata.name!, deleteOptions))
                .object,
            );
          return send(res, 200, {
            apiVersion: type.group === '' ? type.version : `${type.group}/${type.version}`,
            kind: type.listKind,
            metadata: {},
            items: deleted,
          });
        }
        const result = await this.registry.delete(type, namespace, name, deleteOptions);
        warn();
        if (type.custom || !result.gone || type.kind === 'Namespace')
          return reply(req, res, 200, result.object);
        return send(res, 200, {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Success',
          details: { name, group: type.group, kind: type.plural, uid: result.object.metadata.uid },
        });
      }
      default:
        throw methodNotAllowed(`method ${method} is not supported`);
    }
  }

  private route(segments: readonly string[]): Route | undefined {
    let groupName: string;
    let version: string;
    let rest: readonly string[];
    if (segments[0] === 'api' && segments.length >= 3) {
      groupName = '';
      version = segments[1]!;
      rest = segments.slice(2);
    } else if (segments[0] === 'apis' && segments.length >= 4) {
      groupName = segments[1]!;
      version = segments[2]!;
      rest = segments.slice(3);
    } else return undefined;
    const typeOf = (plural: string) => this.registry.typeFor(groupName, version, plural);
    if (rest[0] === 'namespaces' && rest.length >= 3 && typeOf(rest[2]!)?.namespaced) {
      const type = typeOf(rest[2]!)!;
      return this.routeOf(type, rest[1], rest[3], rest[4], rest.length > 5);
    }
    const type = typeOf(rest[0]!);
    if (!type) return undefined;
    if (type.namespaced && rest.length > 1) return undefined;
    return this.routeOf(type, undefined, rest[1], rest[2], rest.length > 3);
  }

  private routeOf(
    type: ResourceType,
    namespace: string | undefined,
    name: string | undefined,
    sub: string | undefined,
    extra: boolean,
  ): Route | undefined {
    if (extra) return undefined;
    if (sub !== undefined && !(sub === 'status' && type.statusSubresource)) return undefined;
    return { type, namespace, name, subresource: sub === 'status' ? 'status' : '' };
  }

  private watch(req: IncomingMessage, res: ServerResponse, route: Route, query: URLSearchParams): void {
    const { type, namespace } = route;
    const labels = parseLabelSelector(query.get('labelSelector'));
    const fields = parseFieldSelector(query.get('fieldSelector'));
    const byName = route.name;
    const selector = (o: KubeObject) =>
      labels(o) && fields(o) && (byName === undefined || o.metadata.name === byName);
    const rvParam = query.get('resourceVersion');
    const fromRv = rvParam === null || rvParam === '' || rvParam === '0' ? undefined : Number(rvParam);
    if (fromRv !== undefined && !Number.isInteger(fromRv))
      throw badRequest(`invalid resource version: ${rvParam}`);
    const table = wantsTable(req.headers.accept);
    const includeObject = query.get('includeObject');
    const apiVersion = type.group === '' ? type.version : `${type.group}/${type.version}`;

    res.writeHead(200, {
      'Content-Type': table ? TABLE_CONTENT_TYPE : 'application/json',
      'Transfer-Encoding': 'chunked',
      'Cache-Control': 'no-cache',
    });
    res.flushHeaders();
    const write = (line: JsonObject) => {
      if (!res.writableEnded) res.write(`${JSON.stringify(line)}\n`);
    };
    const bookmark = (annotations?: Record<string, string>) =>
      write({
        type: 'BOOKMARK',
        object: {
          kind: type.kind,
          apiVersion,
          metadata: {
            resourceVersion: String(this.registry.store.currentRv()),
            ...(annotations ? { annotations } : {}),
          },
        },
      });
    const sink = (changeType: ChangeType, object: KubeObject) => {
      const served = this.registry.present(type, object);
      write({
        type: changeType,
        object: table
          ? toTable(type, [served], served.metadata.resourceVersion ?? '', includeObject)
          : served,
      });
    };

    const timers: NodeJS.Timeout[] = [];
    let cancel: () => void = () => undefined;
    const end = () => {
      cancel();
      for (const t of timers) clearTimeout(t);
      this.watches.delete(end);
      if (!res.writableEnded) res.end();
    };
    this.watches.add(end);
    req.on('close', end);
    res.on('close', end);

    const started = this.registry.store.watch(
      { key: `${type.group}/${type.plural}`, namespace, selector },
      fromRv,
      sink,
    );
    if (!started.ok) {
      write({ type: 'ERROR', object: started.status as unknown as JsonObject });
      end();
      return;
    }
    cancel = started.cancel;
    if (query.get('sendInitialEvents') === 'true') bookmark({ 'k8s.io/initial-events-end': 'true' });
    if (query.get('allowWatchBookmarks') === 'true') {
      const tick = () => {
        bookmark();
        timers[0] = setTimeout(tick, this.options.bookmarkIntervalMs);
      };
      timers[0] = setTimeout(tick, this.options.bookmarkIntervalMs);
    }
    const timeout = Number(query.get('timeoutSeconds') ?? '0');
    if (timeout > 0) timers[1] = setTimeout(end, timeout * 1000);
  }
}
