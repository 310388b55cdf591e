// Offline admission of multi-document YAML (`rolepolicy validate -f`): each rolepolicy.io resource is admitted
// as a CREATE through the same engine the API emulator uses, and rejections read as the API server prints them.
import { parseAllDocuments } from 'yaml';
import { API_VERSION, GROUP, isKind } from '../constants.js';
import type { CustomResourceDefinition } from '../crds/crd-definitions.js';
import { admit } from './admit.js';
import type { FieldError } from './field-errors.js';
import { isJsonObject, type JsonObject } from './prune-defaults.js';

/** What happened to one document (or one item of a `List`). */
export type ManifestOutcome = 'accepted' | 'rejected' | 'skipped' | 'unparseable';

/** Result for one document, in file order. */
export interface ManifestResult {
  /** 0-based position of the YAML document in the stream. */
  readonly index: number;
  readonly outcome: ManifestOutcome;
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly name?: string;
  readonly namespace?: string;
  readonly errors: readonly FieldError[];
  /** For rejected documents: the API server's message; for unparseable ones: the YAML error; else why skipped. */
  readonly message?: string;
  /** For accepted documents: the object as it would be stored (pruned, defaulted). */
  readonly object?: JsonObject;
}

/** Optional CRDs to check against (e.g. read from deploy/crds); the built-in definitions otherwise. */
export interface AdmitManifestsOptions {
  readonly crds?: readonly CustomResourceDefinition[];
}

/** Admits every rolepolicy.io resource in a multi-document YAML text; other kinds are reported as skipped. */
export function admitManifests(
  yamlText: string,
  opts: AdmitManifestsOptions = {},
): readonly ManifestResult[] {
  const results: ManifestResult[] = [];
  parseAllDocuments(yamlText).forEach((doc, index) => {
    if ('errors' in doc && doc.errors.length > 0) {
      results.push({
        index,
        outcome: 'unparseable',
        errors: [],
        message: doc.errors.map((e) => e.message).join('; '),
      });
      return;
    }
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) return;
    const items =
      isJsonObject(value) && value['kind'] === 'List' && Array.isArray(value['items'])
        ? value['items']
        : [value];
    for (const item of items) results.push(admitOne(index, item, opts));
  });
  return results;
}

function admitOne(index: number, value: unknown, opts: AdmitManifestsOptions): ManifestResult {
  if (!isJsonObject(value)) return { index, outcome: 'skipped', errors: [], message: 'not an object' };
  const apiVersion = typeof value['apiVersion'] === 'string' ? value['apiVersion'] : undefined;
  const kind = typeof value['kind'] === 'string' ? value['kind'] : undefined;
  const meta = isJsonObject(value['metadata']) ? value['metadata'] : {};
  const ident = {
    ...(apiVersion !== undefined ? { apiVersion } : {}),
    ...(kind !== undefined ? { kind } : {}),
    ...(typeof meta['name'] === 'string' ? { name: meta['name'] } : {}),
    ...(typeof meta['namespace'] === 'string' ? { namespace: meta['namespace'] } : {}),
  };
  const inGroup = apiVersion !== undefined && apiVersion.split('/')[0] === GROUP;
  if (!inGroup || kind === undefined) {
    return { index, ...ident, outcome: 'skipped', errors: [], message: 'not a rolepolicy.io resource' };
  }
  if (apiVersion !== API_VERSION || !isKind(kind)) {
    return {
      index,
      ...ident,
      outcome: 'rejected',
      errors: [],
      message: `no matches for kind "${kind}" in version "${apiVersion}"`,
    };
  }
  const crd = opts.crds?.find((c) => c.spec.names.kind === kind);
  const result = admit({ ...(crd !== undefined ? { crd } : { kind }), operation: 'CREATE', object: value });
  return result.allowed
    ? { index, ...ident, outcome: 'accepted', errors: [], object: result.object }
    : { index, ...ident, outcome: 'rejected', errors: result.errors, message: result.status.message };
}
