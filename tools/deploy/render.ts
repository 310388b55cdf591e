// Renders the Kustomize base and overlays under deploy/ with the real `kubectl kustomize`, and validates
// objects of built-in and third-party kinds against their OpenAPI schemas (kubernetes-models: generated
// from the Kubernetes, KEDA and Prometheus Operator schemas, maintained upstream).
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

/** The repository root. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** kubectl as installed on the machine (the CI image ships it). */
export const KUBECTL = process.env['KUBECTL'] ?? 'kubectl';
/**
 * Kustomizations a user installs: the base, the two fleet overlays and the base without the admission policy
 * of decisions. deploy/overlays/approval-identity-mutating is rendered on its own (manifests.int-spec.ts):
 * no maintained schema knows MutatingAdmissionPolicy (v1beta1) yet.
 */
export const KUSTOMIZATIONS = [
  'deploy/base',
  'deploy/overlays/small',
  'deploy/overlays/large',
  'deploy/overlays/without-approval-admission',
] as const;

/** One rendered object. */
export type Manifest = {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly [k: string]: unknown };
  readonly [key: string]: unknown;
};

/** Runs a command and returns its stdout; rejects with its stderr. */
export function run(command: string, args: readonly string[], input?: string, env?: NodeJS.ProcessEnv) {
  return new Promise<string>((resolve, reject) => {
    const child = execFile(
      command,
      [...args],
      { cwd: REPO_ROOT, env: env ?? process.env, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`${command} ${args.join(' ')}: ${stderr || error.message}`));
        else resolve(stdout);
      },
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}

/** Parses a multi-document YAML stream. */
export function parseManifests(yaml: string): Manifest[] {
  return parseAllDocuments(yaml)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(doc.errors[0]!.message);
      return doc.toJS() as Manifest | null;
    })
    .filter((m): m is Manifest => m !== null);
}

/** `kubectl kustomize <dir>`: the YAML a user would apply, and its objects. */
export async function render(dir: string): Promise<{ yaml: string; objects: Manifest[] }> {
  const yaml = await run(KUBECTL, ['kustomize', dir]);
  return { yaml, objects: parseManifests(yaml) };
}

/** The `group` part of an apiVersion (`''` for the core group). */
export function groupOf(apiVersion: string): string {
  return apiVersion.includes('/') ? apiVersion.split('/')[0]! : '';
}

/** Model packages by API group: the Kubernetes kinds, KEDA's and the Prometheus Operator's. */
const PACKAGE_OF_GROUP: Readonly<Record<string, string>> = {
  'keda.sh': '@kubernetes-models/keda',
  'monitoring.coreos.com': '@kubernetes-models/prometheus-operator',
};

type Model = { validate(): void };
type ModelClass = new (data: Manifest) => Model;

/** The schema-carrying model class of an object's kind; throws when no maintained schema knows it. */
export async function modelOf(object: Pick<Manifest, 'apiVersion' | 'kind'>): Promise<ModelClass> {
  const group = groupOf(object.apiVersion);
  const pkg = PACKAGE_OF_GROUP[group] ?? 'kubernetes-models';
  const module = (await import(`${pkg}/${object.apiVersion}/${object.kind}`)) as Record<string, ModelClass>;
  const model = module[object.kind];
  if (!model) throw new Error(`${pkg} has no model for ${object.apiVersion} ${object.kind}`);
  return model;
}

/** Wraps `value` so that every property the validator reads is noted in `read` (as a `/a/b` path). */
function tracked(value: unknown, path: string, read: Set<string>): unknown {
  if (value === null || typeof value !== 'object') return value;
  return new Proxy(value, {
    get(target, key, receiver) {
      const inner = Reflect.get(target, key, receiver) as unknown;
      if (typeof key !== 'string') return inner;
      read.add(`${path}/${key}`);
      return tracked(inner, `${path}/${key}`, read);
    },
  });
}

/** Fields of `value` the validator never read: fields the schema does not know. */
function unread(value: unknown, path: string, read: ReadonlySet<string>, out: string[]): void {
  if (value === null || typeof value !== 'object') return;
  for (const [key, inner] of Object.entries(value)) {
    const at = `${path}/${key}`;
    if (read.has(at)) unread(inner, at, read, out);
    else out.push(at.slice(1).replace(/\//g, '.'));
  }
}

/**
 * Validates one object against its kind's schema; the error names the field and the rule. Strict like
 * the API server's `fieldValidation=Strict`: a field the schema does not define is an error too (the
 * compiled validators read every property they know, so a field never read is unknown).
 */
export async function validateAgainstSchema(object: Manifest): Promise<void> {
  const Model = await modelOf(object);
  const where = `${object.kind} ${object.metadata.name}`;
  const read = new Set<string>();
  try {
    Model.prototype.validate.call(tracked(object, '', read));
  } catch (err) {
    throw new Error(`${where}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  // A CRD's openAPIV3Schema is free-form JSON Schema (the compiled validator does not walk it); the
  // CRDs are generated and checked by libs/kube and installed through the API emulator instead.
  if (object.kind === 'CustomResourceDefinition') return;
  const unknown: string[] = [];
  unread(object, '', read, unknown);
  if (unknown.length > 0) throw new Error(`${where}: unknown field ${unknown.join(', ')}`);
}
