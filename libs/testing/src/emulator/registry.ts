// The API server's write semantics over the store: create/update/patch/delete with the status
// subresource split, generation, optimistic concurrency, finalizers, cascade deletion and admission.
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import {
  ApiError,
  alreadyExists,
  badRequest,
  conflict,
  invalid,
  namespaceTerminating,
  notFound,
} from './errors.js';
import { applyPatch, type PatchType } from './patch.js';
import { BUILTIN_TYPES, apiVersionOf, storageKey, typesFromCrd } from './resource-types.js';
import type { Selector } from './selectors.js';
import { ObjectStore } from './store.js';
import { checkCrd, crdStatus } from './crd-status.js';
import { clone, isObject, normalizeSecret, prunedFields, specPart, timestamp } from './object-rules.js';
import type { AdmissionHook, KubeObject, ResourceType, WriteOptions } from './types.js';
import type { MutatingStage, ValidatingStage } from './admission-stages.js';

export type { MutatingStage, PolicyRequest, ValidatingStage } from './admission-stages.js';
export type { WriteOptions } from './types.js';

/** Options of a delete (body `DeleteOptions` merged with query parameters). */
export type DeleteOptions = WriteOptions & {
  readonly propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  readonly preconditions?: { readonly uid?: string; readonly resourceVersion?: string };
};

/** Result of a delete: the object (still present when finalizers hold it) and whether it is gone. */
export type DeleteResult = { readonly object: KubeObject; readonly gone: boolean };

/** A list result: matching objects plus the store's resourceVersion at the time of listing. */
export type ListResult = { readonly items: KubeObject[]; readonly resourceVersion: string };

const CRD_KEY = 'apiextensions.k8s.io/customresourcedefinitions';
const NAMESPACE_KEY = '/namespaces';

/** The emulated API server state: resource types, objects and the admission hook. */
export class Registry {
  readonly store: ObjectStore;
  private readonly types = new Map<string, ResourceType>();
  private queue: Promise<unknown> = Promise.resolve();
  private admission: AdmissionHook | undefined;
  private validating: ValidatingStage | undefined;
  private mutating: MutatingStage | undefined;

  constructor(options: { readonly historyLimit: number; readonly admission?: AdmissionHook }) {
    this.store = new ObjectStore(options.historyLimit);
    this.admission = options.admission;
    for (const type of BUILTIN_TYPES)
      this.types.set(this.typeKey(type.group, type.version, type.plural), type);
    for (const name of ['default', 'kube-system', 'kube-public']) this.ensureNamespace(name);
  }

  /** Replaces the admission hook (e.g. once the real admission engine is available). */
  setAdmission(hook: AdmissionHook | undefined): void {
    this.admission = hook;
  }

  /** Sets the mutating admission stage (MutatingAdmissionPolicies). */
  setMutating(stage: MutatingStage | undefined): void {
    this.mutating = stage;
  }

  /** Sets the validating admission stage (ValidatingAdmissionPolicies). */
  setValidating(stage: ValidatingStage | undefined): void {
    this.validating = stage;
  }

  private typeKey(group: string, version: string, plural: string): string {
    return `${group}/${version}/${plural}`;
  }

  /** The served resource at group/version/plural, if any. */
  typeFor(group: string, version: string, plural: string): ResourceType | undefined {
    return this.types.get(this.typeKey(group, version, plural));
  }

  /** Every served resource type. */
  allTypes(): ResourceType[] {
    return [...this.types.values()];
  }

  /** Installs (or replaces) the resources a CRD defines. */
  installCrd(crd: KubeObject): void {
    for (const [key, type] of this.types) {
      if (type.crd?.metadata.name === crd.metadata.name) this.types.delete(key);
    }
    for (const type of typesFromCrd(crd))
      this.types.set(this.typeKey(type.group, type.version, type.plural), type);
  }

  /** Runs writes one at a time, because admission may be asynchronous. */
  private serialized<T>(work: () => Promise<T> | T): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** The object as served at `type`'s version. */
  present(type: ResourceType, object: KubeObject): KubeObject {
    return { ...object, apiVersion: apiVersionOf(type), kind: type.kind };
  }

  get(type: ResourceType, namespace: string | undefined, name: string): KubeObject {
    const object = this.store.get(storageKey(type), namespace, name);
    if (!object) throw notFound(type, name);
    return this.present(type, object);
  }

  list(type: ResourceType, namespace: string | undefined, labels: Selector, fields: Selector): ListResult {
    const items = this.store
      .list(storageKey(type), namespace)
      .filter((o) => labels(o) && fields(o))
      .map((o) => this.present(type, o));
    return { items, resourceVersion: String(this.store.currentRv()) };
  }

  create(
    type: ResourceType,
    namespace: string | undefined,
    body: unknown,
    options: WriteOptions,
  ): Promise<KubeObject> {
    return this.serialized(() => this.doCreate(type, namespace, body, options));
  }

  update(
    type: ResourceType,
    namespace: string | undefined,
    name: string,
    body: unknown,
    subresource: '' | 'status',
    options: WriteOptions,
  ): Promise<KubeObject> {
    return this.serialized(async () => {
      const current = this.store.get(storageKey(type), namespace, name);
      if (!current) throw notFound(type, name);
      const candidate = this.decode(type, body);
      if (candidate.metadata.name !== undefined && candidate.metadata.name !== name) {
        throw badRequest(
          `the name of the object (${candidate.metadata.name}) does not match the name on the URL (${name})`,
        );
      }
      const rv = candidate.metadata.resourceVersion;
      if (rv === undefined || rv === '') {
        if (type.custom) {
          throw invalid(type, name, [
            {
              field: 'metadata.resourceVersion',
              message: 'Invalid value: 0x0: must be specified for an update',
            },
          ]);
        }
      } else if (rv !== current.metadata.resourceVersion) {
        throw conflict(type, name);
      }
      return this.commitUpdate(type, current, candidate, subresource, options);
    });
  }

  patch(
    type: ResourceType,
    namespace: string | undefined,
    name: string,
    patchType: PatchType,
    patch: unknown,
    subresource: '' | 'status',
    options: WriteOptions,
  ): Promise<KubeObject> {
    return this.serialized(async () => {
      const current = this.store.get(storageKey(type), namespace, name);
      // Server-side apply creates a missing object from the applied configuration.
      if (!current && patchType === 'apply' && subresource === '') {
        return this.doCreate(type, namespace, patch, options);
      }
      if (!current) throw notFound(type, name);
      const patched = applyPatch(this.present(type, current), patchType, patch);
      const candidate = this.decode(type, patched);
      const rv = candidate.metadata.resourceVersion;
      if (rv !== undefined && rv !== '' && rv !== current.metadata.resourceVersion)
        throw conflict(type, name);
      return this.commitUpdate(type, current, candidate, subresource, options);
    });
  }

  delete(
    type: ResourceType,
    namespace: string | undefined,
    name: string,
    options: DeleteOptions,
  ): Promise<DeleteResult> {
    return this.serialized(() => {
      const current = this.store.get(storageKey(type), namespace, name);
      if (!current) throw notFound(type, name);
      const pre = options.preconditions;
      if (pre?.uid !== undefined && pre.uid !== current.metadata.uid) {
        throw conflict(
          type,
          name,
          `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${current.metadata.uid}`,
        );
      }
      if (pre?.resourceVersion !== undefined && pre.resourceVersion !== current.metadata.resourceVersion) {
        throw conflict(
          type,
          name,
          `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${current.metadata.resourceVersion}`,
        );
      }
      this.validating?.({
        type,
        operation: 'DELETE',
        subresource: '',
        name,
        namespace,
        object: null,
        oldObject: this.present(type, current),
        options,
      });
      if (options.dryRun)
        return { object: this.present(type, current), gone: !current.metadata.finalizers?.length };
      if (options.propagationPolicy === 'Orphan') this.orphanDependents(current.metadata.uid!);
      const result = this.deleteObject(type, current);
      return { object: this.present(type, result.object), gone: result.gone };
    });
  }

  /** Turns a request body into an object of `type`, refusing mismatched kinds. */
  private decode(type: ResourceType, body: unknown): KubeObject {
    if (!isObject(body)) throw badRequest('the body of the request must be a JSON object');
    const object = clone(body) as KubeObject;
    if (object.kind !== undefined && object.kind !== type.kind) {
      throw badRequest(
        `the kind of the object (${String(object.kind)}) does not match the resource (${type.kind})`,
      );
    }
    if (
      object.apiVersion !== undefined &&
      !String(object.apiVersion).startsWith(type.group === '' ? 'v' : `${type.group}/`)
    ) {
      throw badRequest(
        `the API version in the data (${String(object.apiVersion)}) does not match the expected API version (${apiVersionOf(type)})`,
      );
    }
    object.apiVersion = apiVersionOf(type);
    object.kind = type.kind;
    if (!isObject(object.metadata)) object.metadata = {};
    return object;
  }

  private ensureNamespace(name: string): void {
    if (this.store.get(NAMESPACE_KEY, undefined, name)) return;
    const ns: KubeObject = {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: {
        name,
        uid: randomUUID(),
        creationTimestamp: timestamp(),
        labels: { 'kubernetes.io/metadata.name': name },
        resourceVersion: String(this.store.nextRv()),
      },
      spec: { finalizers: ['kubernetes'] },
      status: { phase: 'Active' },
    };
    this.store.put(NAMESPACE_KEY, ns, undefined);
  }

  private async admit(
    type: ResourceType,
    operation: 'CREATE' | 'UPDATE',
    subresource: '' | 'status',
    object: KubeObject,
    oldObject: KubeObject | undefined,
    strict: boolean,
  ): Promise<KubeObject> {
    if (!this.admission) return object;
    const outcome = await this.admission({ operation, subresource, resource: type, object, oldObject });
    if (outcome.allowed) {
      const admitted = outcome.object ? (clone(outcome.object) as KubeObject) : object;
      const unknown = strict && type.crd ? prunedFields(object, admitted) : [];
      if (unknown.length > 0) {
        throw badRequest(
          `${type.kind} in version "${type.version}" cannot be handled as a ${type.kind}: strict decoding error: ${unknown
            .map((f) => `unknown field "${f}"`)
            .join(', ')}`,
        );
      }
      return admitted;
    }
    if (outcome.status) throw new ApiError(outcome.status);
    throw invalid(type, object.metadata.name ?? '', outcome.causes ?? []);
  }

  private async doCreate(
    type: ResourceType,
    namespace: string | undefined,
    body: unknown,
    options: WriteOptions,
  ): Promise<KubeObject> {
    const object = this.decode(type, body);
    const meta = object.metadata;
    if (type.namespaced) {
      if (meta.namespace !== undefined && meta.namespace !== '' && meta.namespace !== namespace) {
        throw badRequest(
          'the namespace of the provided object does not match the namespace sent on the request',
        );
      }
      meta.namespace = namespace;
    } else {
      delete meta.namespace;
    }
    if (!meta.name) {
      if (!meta.generateName) {
        throw invalid(type, '', [
          {
            field: 'metadata.name',
            message: 'Required value: name or generateName is required',
            reason: 'FieldValueRequired',
          },
        ]);
      }
      meta.name = `${meta.generateName}${randomUUID().replace(/-/g, '').slice(0, 5)}`;
    }
    const name = meta.name;
    if (type.namespaced && namespace !== undefined) {
      const ns = this.store.get(NAMESPACE_KEY, undefined, namespace);
      if (ns?.metadata.deletionTimestamp) throw namespaceTerminating(type, name, namespace);
    }
    if (this.store.get(storageKey(type), namespace, name)) throw alreadyExists(type, name);
    for (const field of [
      'uid',
      'resourceVersion',
      'creationTimestamp',
      'deletionTimestamp',
      'deletionGracePeriodSeconds',
      'generation',
      'selfLink',
      'managedFields',
    ]) {
      delete meta[field];
    }
    if (type.statusSubresource && type.kind !== 'Namespace') delete object['status'];
    normalizeSecret(type, object);
    if (storageKey(type) === CRD_KEY) checkCrd(type, object);
    const stage = {
      type,
      operation: 'CREATE',
      subresource: '',
      name,
      namespace,
      oldObject: null,
      options,
    } as const;
    const mutated = this.mutating?.({ ...stage, object: this.present(type, object) }) ?? object;
    const admitted = await this.admit(type, 'CREATE', '', mutated, undefined, options.strict ?? false);
    this.validating?.({ ...stage, object: this.present(type, admitted) });
    const stored: KubeObject = { ...admitted, metadata: { ...admitted.metadata } };
    stored.metadata.uid = randomUUID();
    stored.metadata.creationTimestamp = timestamp();
    if (type.tracksGeneration) stored.metadata.generation = 1;
    if (type.kind === 'Namespace' && type.group === '') {
      stored['spec'] = { finalizers: ['kubernetes'] };
      stored['status'] = { phase: 'Active' };
    }
    if (storageKey(type) === CRD_KEY) stored['status'] = crdStatus(stored);
    if (options.dryRun) return this.present(type, stored);
    if (type.namespaced && namespace !== undefined) this.ensureNamespace(namespace);
    stored.metadata.resourceVersion = String(this.store.nextRv());
    this.store.put(storageKey(type), stored, undefined);
    if (storageKey(type) === CRD_KEY) this.installCrd(stored);
    return this.present(type, stored);
  }

  private async commitUpdate(
    type: ResourceType,
    current: KubeObject,
    candidate: KubeObject,
    subresource: '' | 'status',
    options: WriteOptions,
  ): Promise<KubeObject> {
    let next: KubeObject;
    if (subresource === 'status') {
      next = clone(current);
      if (candidate['status'] === undefined) delete next['status'];
      else next['status'] = clone(candidate['status']);
    } else {
      next = clone(candidate);
      const keep = [
        'name',
        'namespace',
        'uid',
        'creationTimestamp',
        'generation',
        'deletionTimestamp',
        'deletionGracePeriodSeconds',
        'resourceVersion',
      ];
      for (const field of keep) {
        if (current.metadata[field] === undefined) delete next.metadata[field];
        else next.metadata[field] = current.metadata[field];
      }
      if (type.statusSubresource) {
        if (current['status'] === undefined) delete next['status'];
        else next['status'] = clone(current['status']);
      }
      normalizeSecret(type, next);
      if (current.metadata.deletionTimestamp) {
        const before = new Set(current.metadata.finalizers ?? []);
        const added = (next.metadata.finalizers ?? []).filter((f) => !before.has(f));
        if (added.length > 0) {
          throw invalid(type, current.metadata.name!, [
            {
              field: 'metadata.finalizers',
              reason: 'FieldValueForbidden',
              message: `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map((f) => JSON.stringify(f)).join(', ')}}`,
            },
          ]);
        }
      }
      if (storageKey(type) === CRD_KEY) checkCrd(type, next);
    }
    const stage = {
      type,
      operation: 'UPDATE',
      subresource,
      name: current.metadata.name!,
      namespace: current.metadata.namespace,
      oldObject: this.present(type, current),
      options,
    } as const;
    next = this.mutating?.({ ...stage, object: this.present(type, next) }) ?? next;
    const admitted = await this.admit(
      type,
      'UPDATE',
      subresource,
      next,
      this.present(type, current),
      options.strict ?? false,
    );
    next = { ...admitted, metadata: { ...admitted.metadata } };
    next.metadata.resourceVersion = current.metadata.resourceVersion;
    this.validating?.({ ...stage, object: this.present(type, next) });
    if (isDeepStrictEqual(next, current)) return this.present(type, current);
    if (type.tracksGeneration && !isDeepStrictEqual(specPart(next), specPart(current))) {
      next.metadata.generation = (current.metadata.generation ?? 0) + 1;
    }
    if (options.dryRun) return this.present(type, next);
    next.metadata.resourceVersion = String(this.store.nextRv());
    this.store.put(storageKey(type), next, current);
    if (storageKey(type) === CRD_KEY) this.installCrd(next);
    if (next.metadata.deletionTimestamp && !next.metadata.finalizers?.length) this.finishDeletion(type, next);
    return this.present(type, next);
  }

  /** Deletes now, or marks for deletion when finalizers hold the object. */
  private deleteObject(type: ResourceType, current: KubeObject): { object: KubeObject; gone: boolean } {
    const key = storageKey(type);
    const isNamespace = key === NAMESPACE_KEY;
    if (current.metadata.finalizers?.length || isNamespace) {
      if (current.metadata.deletionTimestamp) return { object: current, gone: false };
      const marked = clone(current);
      marked.metadata.deletionTimestamp = timestamp();
      marked.metadata.deletionGracePeriodSeconds = 0;
      if (type.tracksGeneration) marked.metadata.generation = (current.metadata.generation ?? 0) + 1;
      if (isNamespace) marked['status'] = { phase: 'Terminating' };
      marked.metadata.resourceVersion = String(this.store.nextRv());
      this.store.put(key, marked, current);
      if (isNamespace) {
        this.emptyNamespace(current.metadata.name!);
        const after = this.store.get(key, undefined, current.metadata.name!);
        return { object: after ?? marked, gone: after === undefined };
      }
      return { object: marked, gone: false };
    }
    this.finishDeletion(type, current);
    return { object: current, gone: true };
  }

  /** Removes the object for good, then lets the garbage collector and namespace controller react. */
  private finishDeletion(type: ResourceType, object: KubeObject): void {
    const key = storageKey(type);
    this.store.remove(key, object);
    if (key === CRD_KEY) this.uninstallCrd(object);
    this.collectDependents(object.metadata.uid!);
    const ns = object.metadata.namespace;
    if (ns !== undefined) this.finishNamespaceIfEmpty(ns);
  }

  private typeOfKey(key: string): ResourceType | undefined {
    return this.allTypes().find((t) => storageKey(t) === key);
  }

  /** Background cascade: dependents whose owners are all gone are deleted; others lose the ref. */
  private collectDependents(ownerUid: string): void {
    const uids = new Set<string>();
    for (const { object } of this.store.all()) uids.add(object.metadata.uid!);
    const dependents = [...this.store.all()].filter(({ object }) =>
      (object.metadata.ownerReferences ?? []).some((r) => r.uid === ownerUid),
    );
    for (const { key, object } of dependents) {
      const live = this.store.get(key, object.metadata.namespace, object.metadata.name!);
      const type = this.typeOfKey(key);
      if (!live || !type) continue;
      const remaining = (live.metadata.ownerReferences ?? []).filter(
        (r) => r.uid !== ownerUid && uids.has(r.uid),
      );
      if (remaining.length === 0) {
        this.deleteObject(type, live);
      } else {
        const next = clone(live);
        next.metadata.ownerReferences = remaining;
        next.metadata.resourceVersion = String(this.store.nextRv());
        this.store.put(key, next, live);
      }
    }
  }

  private orphanDependents(ownerUid: string): void {
    for (const { key, object } of [...this.store.all()]) {
      const refs = object.metadata.ownerReferences ?? [];
      if (!refs.some((r) => r.uid === ownerUid)) continue;
      const next = clone(object);
      next.metadata.ownerReferences = refs.filter((r) => r.uid !== ownerUid);
      if (next.metadata.ownerReferences.length === 0) delete next.metadata.ownerReferences;
      next.metadata.resourceVersion = String(this.store.nextRv());
      this.store.put(key, next, object);
    }
  }

  private emptyNamespace(namespace: string): void {
    for (const { key, object } of [...this.store.all()]) {
      if (object.metadata.namespace !== namespace) continue;
      const type = this.typeOfKey(key);
      const live = this.store.get(key, namespace, object.metadata.name!);
      if (type && live) this.deleteObject(type, live);
    }
    this.finishNamespaceIfEmpty(namespace);
  }

  private finishNamespaceIfEmpty(namespace: string): void {
    const ns = this.store.get(NAMESPACE_KEY, undefined, namespace);
    if (!ns?.metadata.deletionTimestamp) return;
    for (const { object } of this.store.all()) if (object.metadata.namespace === namespace) return;
    this.store.remove(NAMESPACE_KEY, ns);
  }

  private uninstallCrd(crd: KubeObject): void {
    const types = typesFromCrd(crd);
    for (const type of types) this.types.delete(this.typeKey(type.group, type.version, type.plural));
    if (types[0]) this.store.removeAll(storageKey(types[0]));
  }
}
