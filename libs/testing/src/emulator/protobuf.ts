// The Kubernetes protobuf encoding for the core kinds kubectl sends that way (Namespace, Secret,
// ConfigMap, Event, ServiceAccount, their lists, and meta/v1 DeleteOptions): the 4-byte `k8s\0` magic,
// then a runtime.Unknown envelope whose `raw` holds the object's message. The wire format is
// protobufjs's, driven by the upstream .proto files vendored under libs/testing/proto; this file
// only maps between the messages and the JSON form the emulator stores (Time as RFC 3339 strings,
// Quantity and IntOrString as scalars, FieldsV1/RawExtension as embedded JSON).
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { badRequest } from './errors.js';
import type { JsonObject } from './types.js';

/** Media type of the Kubernetes protobuf encoding. */
export const PROTOBUF_CONTENT_TYPE = 'application/vnd.kubernetes.protobuf';

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]); // "k8s\0"
const CORE = 'k8s.io.api.core.v1';
const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';
const RBAC = 'k8s.io.api.rbac.v1';
const AUTHN = 'k8s.io.api.authentication.v1';
const AUTHZ = 'k8s.io.api.authorization.v1';

/** The upstream .proto files loaded (relative to libs/testing/proto). */
const PROTO_FILES = ['core', 'rbac', 'authentication', 'authorization'].map(
  (group) => `k8s.io/api/${group}/v1/generated.proto`,
);

/** Kinds served in protobuf (kind names are unique across these groups), lists included. */
const MESSAGES: Readonly<Record<string, string>> = Object.fromEntries([
  ...['Namespace', 'Secret', 'ConfigMap', 'Event', 'ServiceAccount'].flatMap((kind) => [
    [kind, `${CORE}.${kind}`],
    [`${kind}List`, `${CORE}.${kind}List`],
  ]),
  // kubectl create role/clusterrole/rolebinding/clusterrolebinding use the typed RBAC client.
  ...['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding'].flatMap((kind) => [
    [kind, `${RBAC}.${kind}`],
    [`${kind}List`, `${RBAC}.${kind}List`],
  ]),
  // kubectl auth whoami / can-i.
  ['SelfSubjectReview', `${AUTHN}.SelfSubjectReview`],
  ...[
    'SelfSubjectAccessReview',
    'SubjectAccessReview',
    'LocalSubjectAccessReview',
    'SelfSubjectRulesReview',
  ].map((kind) => [kind, `${AUTHZ}.${kind}`]),
  ['DeleteOptions', `${META}.DeleteOptions`],
  ['Status', `${META}.Status`],
]);

function protoRoot(): string {
  // Source (libs/testing/src/emulator) and build output (dist/libs/testing/src/emulator) both live
  // below the repository root, which holds libs/testing/proto.
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'libs/testing/proto');
    if (existsSync(join(candidate, 'k8s.io'))) return candidate;
    const parent = dirname(dir);
    if (parent === dir)
      throw new Error('libs/testing/proto (the vendored Kubernetes .proto files) not found');
    dir = parent;
  }
}

let loaded: protobuf.Root | undefined;

function root(): protobuf.Root {
  if (loaded) return loaded;
  const base = protoRoot();
  const r = new protobuf.Root();
  // Imports are written as "k8s.io/apimachinery/pkg/…/generated.proto": resolve them under base.
  r.resolvePath = (_origin, target) => (target.startsWith('k8s.io/') ? join(base, target) : resolve(target));
  r.loadSync(
    PROTO_FILES.map((file) => join(base, file)),
    { keepCase: true },
  );
  r.resolveAll();
  loaded = r;
  return r;
}

/** True when this kind has a protobuf message the emulator can encode. */
export function hasProtobuf(kind: string): boolean {
  return MESSAGES[kind] !== undefined;
}

/** True when the client's first choice in Accept is protobuf (what client-go's typed clients send). */
export function prefersProtobuf(accept: string | undefined): boolean {
  const first = (accept ?? '').split(',')[0]!.trim();
  return first.split(';')[0]!.trim() === PROTOBUF_CONTENT_TYPE && !/;\s*as=/.test(first);
}

/** True for a request body in the protobuf encoding. */
export function isProtobuf(contentType: string | undefined): boolean {
  return (contentType ?? '').split(';')[0]!.trim() === PROTOBUF_CONTENT_TYPE;
}

// ---- JSON <-> message conversion for the few types whose JSON form differs from their message ----

type Direction = 'toMessage' | 'toJson';

function rfc3339(seconds: number, nanos: number, micro: boolean): string {
  const iso = new Date(seconds * 1000).toISOString(); // always .000Z
  if (!micro) return iso.replace(/\.\d{3}Z$/, 'Z');
  return iso.replace(/\.\d{3}Z$/, `.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z`);
}

function parseTime(value: unknown, field: string): { seconds: number; nanos: number } {
  const text = String(value);
  const match = /^(.*?)(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/.exec(text);
  const millis = match ? Date.parse(`${match[1]}${match[3]}`) : NaN;
  if (!match || Number.isNaN(millis)) throw badRequest(`${field}: "${text}" is not an RFC 3339 time`);
  return { seconds: Math.floor(millis / 1000), nanos: Number((match[2] ?? '0').padEnd(9, '0')) };
}

/** Marks a field the JSON form leaves out (Go's `omitempty`). */
const OMIT = Symbol('omit');

/** The special cases, by message full name; everything else maps field by field. */
function special(typeName: string, value: unknown, direction: Direction, field: string): unknown | undefined {
  const msg = value as JsonObject;
  switch (typeName) {
    case `.${META}.Time`:
    case `.${META}.MicroTime`:
      if (direction === 'toMessage') return parseTime(value, field);
      // Go writes a zero time as an empty message; JSON has no field for it.
      if (!Number(msg['seconds'] ?? 0) && !Number(msg['nanos'] ?? 0)) return OMIT;
      return rfc3339(Number(msg['seconds'] ?? 0), Number(msg['nanos'] ?? 0), typeName.endsWith('MicroTime'));
    case '.k8s.io.apimachinery.pkg.api.resource.Quantity':
      return direction === 'toMessage' ? { string: String(value) } : msg['string'];
    case '.k8s.io.apimachinery.pkg.util.intstr.IntOrString':
      if (direction === 'toMessage')
        return typeof value === 'number' ? { type: 0, intVal: value } : { type: 1, strVal: String(value) };
      return Number(msg['type'] ?? 0) === 0 ? Number(msg['intVal'] ?? 0) : msg['strVal'];
    case `.${META}.FieldsV1`:
      if (direction === 'toMessage') return { Raw: Buffer.from(JSON.stringify(value)).toString('base64') };
      return JSON.parse(Buffer.from(String(msg['Raw'] ?? ''), 'base64').toString('utf8') || '{}');
    case `.${AUTHN}.ExtraValue`:
    case `.${AUTHZ}.ExtraValue`:
      // JSON writes a user's extra values as a plain list of strings.
      return direction === 'toMessage' ? { items: value } : (msg['items'] ?? []);
    case '.k8s.io.apimachinery.pkg.runtime.RawExtension':
      if (direction === 'toMessage') return { raw: Buffer.from(JSON.stringify(value)).toString('base64') };
      return JSON.parse(Buffer.from(String(msg['raw'] ?? ''), 'base64').toString('utf8') || 'null');
    default:
      return undefined;
  }
}

function convertValue(field: protobuf.Field, value: unknown, direction: Direction, path: string): unknown {
  const type = field.resolvedType;
  if (!(type instanceof protobuf.Type)) return value; // scalars: protobufjs converts base64, longs
  const handled = special(type.fullName, value, direction, path);
  if (handled !== undefined) return handled;
  return convertMessage(type, value as JsonObject, direction, path);
}

function convertMessage(
  type: protobuf.Type,
  value: JsonObject,
  direction: Direction,
  path: string,
): JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw badRequest(`${path || type.name}: expected an object`);
  const out: JsonObject = {};
  for (const field of type.fieldsArray) {
    const v = value[field.name];
    if (v === undefined || v === null) continue;
    const at = path ? `${path}.${field.name}` : field.name;
    if (field.map) {
      out[field.name] = Object.fromEntries(
        Object.entries(v as JsonObject).map(([k, item]) => [
          k,
          convertValue(field, item, direction, `${at}.${k}`),
        ]),
      );
    } else if (field.repeated) {
      out[field.name] = (v as unknown[]).map((item, i) =>
        convertValue(field, item, direction, `${at}[${i}]`),
      );
      if ((out[field.name] as unknown[]).length === 0 && direction === 'toJson') delete out[field.name];
    } else {
      const converted = convertValue(field, v, direction, at);
      // Go's protobuf writes empty strings that its JSON omits (omitempty): drop them on the way in.
      if (converted === OMIT || (direction === 'toJson' && converted === '')) continue;
      out[field.name] = converted;
    }
  }
  return out;
}

// ---- envelope ----

function unknownType(): protobuf.Type {
  return root().lookupType('k8s.io.apimachinery.pkg.runtime.Unknown');
}

/** Decodes a `k8s\0`-prefixed runtime.Unknown into the JSON object it carries (apiVersion/kind included). */
export function decodeProtobuf(body: Buffer): JsonObject {
  if (body.length < 4 || !body.subarray(0, 4).equals(MAGIC))
    throw badRequest(
      'the request body is not in the Kubernetes protobuf encoding (missing the k8s\\0 prefix)',
    );
  const envelope = unknownType().toObject(unknownType().decode(body.subarray(4)), { bytes: Buffer }) as {
    typeMeta?: { apiVersion?: string; kind?: string };
    raw?: Buffer;
  };
  const kind = envelope.typeMeta?.kind ?? '';
  const apiVersion = envelope.typeMeta?.apiVersion ?? '';
  const name = MESSAGES[kind];
  if (!name) throw badRequest(`kind "${kind}" is not served in the protobuf encoding; send JSON`);
  const type = root().lookupType(name);
  const message = type.toObject(type.decode(envelope.raw ?? Buffer.alloc(0)), {
    longs: Number,
    bytes: String,
  });
  return { apiVersion, kind, ...convertMessage(type, message as JsonObject, 'toJson', '') };
}

/** Encodes a stored object (or list) of a protobuf-served kind as the API server would answer it. */
export function encodeProtobuf(object: JsonObject): Buffer {
  const kind = String(object['kind'] ?? '');
  const name = MESSAGES[kind];
  if (!name) throw new Error(`kind "${kind}" has no protobuf message`);
  const type = root().lookupType(name);
  const raw = type.encode(type.fromObject(convertMessage(type, object, 'toMessage', ''))).finish();
  const envelope = unknownType().fromObject({
    typeMeta: { apiVersion: String(object['apiVersion'] ?? 'v1'), kind },
    raw,
    contentEncoding: '',
    contentType: '',
  });
  return Buffer.concat([MAGIC, unknownType().encode(envelope).finish()]);
}
