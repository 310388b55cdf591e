// Applies k8s-gateway commands to the Kubernetes API with optimistic concurrency: read, change,
// write back with the read resourceVersion, and on 409 re-read and try again a bounded number of times.
// A status write to an object this gateway wrote last starts from its own write instead of a read
// (written-objects.ts), else from the informers' copy; a create of an object the informers know is absent
// goes without a read: the same concurrency, one request less. The informers' events reach the applier
// (`observed`): once they hold its own write, the remembered copy goes and their copy is the base, so a
// write by someone else since (a force-reconcile's annotation, a user's edit) is not answered 409. A write
// the API then refuses with 409 is retried on a fresh read, and every refusal of the gateway's own is
// decided on one.
import { ApiException, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import type { K8sCommandV1 } from '@rolepolicy/contracts';
import { GROUP, KINDS, KIND_NAMES, VERSION } from '@rolepolicy/kube';
import type { WriteView } from './command-authz.js';
import type { CommandOutcome } from './command-outcome.js';
import { EventConflict, EventRecorder } from './event-recorder.js';
import { finalPhaseLeft } from './final-phase.js';
import { RawObjects } from './raw-objects.js';
import { WrittenObjects } from './written-objects.js';

type Json = { [key: string]: unknown };
type Target = K8sCommandV1['target'];

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** RFC 7386 merge patch, the semantics of a `patch-status` command's `status` body. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const result: Json = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

class Conflict extends Error {}

/**
 * Decides, on the object as read right before the write, whether the sender may make it (ADR 0022): a
 * refusal message, or undefined to go ahead. The gateway's own writes pass none.
 */
export type WriteGuard = {
  /** The service the command came from. */
  readonly sender: string;
  readonly check: (view: WriteView) => string | undefined;
};

/** The outcome of a write the guard refused. */
function guarded(guard: WriteGuard | undefined, view: WriteView): CommandOutcome | undefined {
  const message = guard?.check(view);
  return message === undefined || guard === undefined
    ? undefined
    : { kind: 'refused', sender: guard.sender, message };
}

/**
 * The informers' copy of an object: the object, `null` when the informers listed its kind and namespace and
 * do not have it, `undefined` when they cannot tell. Never mutated by the applier.
 */
export type CachedObjects = (target: Target) => KubernetesObject | null | undefined;

/** How many written objects the applier remembers as the base of their next status write. */
const WRITTEN_OBJECTS_KEPT = 2_000;

/** The object `target` names, as KubernetesObjectApi reads it. */
const identify = (target: Target) => ({
  apiVersion: target.apiVersion,
  kind: target.kind,
  metadata: { name: target.name, namespace: target.namespace },
});

const objectKey = (target: Pick<Target, 'kind' | 'namespace' | 'name'>): string =>
  `${target.kind}/${target.namespace}/${target.name}`;

function statusBody(err: ApiException<unknown>): { reason: string; message: string } {
  const raw: unknown = err.body;
  let body: unknown = raw;
  if (typeof raw === 'string') {
    try {
      body = JSON.parse(raw);
    } catch {
      body = undefined;
    }
  }
  const status = isObject(body) ? body : {};
  return {
    reason: typeof status['reason'] === 'string' ? status['reason'] : 'Unknown',
    message: typeof status['message'] === 'string' ? status['message'] : `HTTP ${err.code}`,
  };
}

/** Turns an API failure into an outcome; 409 is thrown back to the retry loop. */
function outcomeOfError(err: unknown): CommandOutcome {
  if (err instanceof Conflict) throw err;
  if (err instanceof ApiException) {
    const code = Number(err.code);
    if (code === 409) throw new Conflict();
    const { reason, message } = statusBody(err);
    if (code === 429 || code >= 500) return { kind: 'unavailable', message: `${code} ${reason}` };
    return { kind: 'rejected', code, reason, message };
  }
  return { kind: 'unavailable', message: err instanceof Error ? err.message.split('\n')[0]! : String(err) };
}

/** Why a `patch-status` must not be written on `current` (stale version, replaced object, final phase). */
function statusRefusal(
  command: Extract<K8sCommandV1, { command: 'patch-status' }>,
  current: KubernetesObject,
): CommandOutcome | undefined {
  const rv = current.metadata?.resourceVersion;
  if (command.resourceVersion !== undefined && command.resourceVersion !== rv) {
    return { kind: 'stale', expected: command.resourceVersion, current: rv };
  }
  if (command.target.uid !== undefined && command.target.uid !== current.metadata?.uid) {
    return {
      kind: 'rejected',
      code: 409,
      reason: 'Conflict',
      message: 'the object was replaced by another with the same name',
    };
  }
  const final = finalPhaseLeft(command.target.kind, (current as Json)['status'], command.status);
  if (final !== undefined) return { kind: 'rejected', code: 409, reason: 'Conflict', message: final };
  return undefined;
}

/** Applies commands; one instance per leader term. */
export class CommandApplier {
  private readonly objects: RawObjects;
  private readonly events: EventRecorder;
  private readonly written = new WrittenObjects(WRITTEN_OBJECTS_KEPT);

  constructor(
    kc: KubeConfig,
    private readonly maxAttempts: number,
    /** This replica's identity, the Events' `reportingInstance`. */
    instance = 'rolepolicy-k8s-gateway',
    /** The informers' view, the base of a first attempt instead of a read; absent: always read. */
    private readonly cached: CachedObjects = () => undefined,
  ) {
    this.objects = new RawObjects(kc);
    this.events = new EventRecorder(kc, instance);
  }

  /**
   * Applies one validated command. Never throws. `guard` checks each write against the object it reads
   * first (a sender's authorisation); a refusal is returned as it is, nothing written.
   */
  async apply(command: K8sCommandV1, guard?: WriteGuard): Promise<CommandOutcome> {
    switch (command.command) {
      case 'patch-status':
        return this.withRetries((attempt) => this.patchStatus(command, guard, attempt === 1));
      case 'apply-resource':
        return this.withRetries((attempt) => this.applyResource(command, guard, attempt === 1));
      case 'delete-resource':
        return this.withRetries(() => this.deleteResource(command.target, guard));
      case 'set-finalizer':
        return this.withRetries(() => this.setFinalizer(command, guard));
      case 'record-event':
        return this.withRetries(async () => {
          try {
            return { kind: 'applied', resourceVersion: await this.events.record(command) };
          } catch (err) {
            return outcomeOfError(err instanceof EventConflict ? new Conflict() : err);
          }
        });
      default: {
        const never: never = command;
        return never;
      }
    }
  }

  /** Runs `attempt` (told its number, from 1) until it does not end in a 409, at most `maxAttempts` times. */
  private async withRetries(attempt: (n: number) => Promise<CommandOutcome>): Promise<CommandOutcome> {
    for (let i = 1; i <= this.maxAttempts; i++) {
      try {
        return await attempt(i);
      } catch (err) {
        if (!(err instanceof Conflict)) return outcomeOfError(err);
        // Someone else wrote in between: re-read and re-apply on the next attempt.
      }
    }
    return { kind: 'conflict', attempts: this.maxAttempts };
  }

  private customCoordinates(target: Target) {
    const kind = KINDS.find((k) => k === target.kind);
    if (!kind || target.apiVersion !== `${GROUP}/${VERSION}`) return undefined;
    return {
      group: GROUP,
      version: VERSION,
      plural: KIND_NAMES[kind].plural,
      namespace: target.namespace,
      name: target.name,
    };
  }

  /**
   * An informer event of an object of a watched kind (add, update, or `deleted`): the remembered write of
   * that object goes once the informers hold it, so the next write starts from their copy (written-objects.ts).
   */
  observed(kind: string, object: KubernetesObject, deleted: boolean): void {
    const meta = object.metadata;
    const key = objectKey({ kind, namespace: meta?.namespace ?? '', name: meta?.name ?? '' });
    this.written.observed(key, deleted ? undefined : meta?.resourceVersion);
  }

  /** Remembers a write as the base of the next, unless the informers hold it already (their event came first). */
  private rememberWrite(target: Target, written: KubernetesObject): void {
    const key = objectKey(target);
    this.written.remember(key, written);
    const held = this.cached(target)?.metadata?.resourceVersion;
    if (held !== undefined) this.written.observed(key, held);
  }

  private async patchStatus(
    command: Extract<K8sCommandV1, { command: 'patch-status' }>,
    guard: WriteGuard | undefined,
    firstAttempt: boolean,
  ): Promise<CommandOutcome> {
    const coords = this.customCoordinates(command.target);
    if (!coords) {
      return {
        kind: 'rejected',
        code: 400,
        reason: 'BadRequest',
        message: `${command.target.kind} has no status subresource the gateway writes`,
      };
    }
    const key = objectKey(command.target);
    // What this gateway wrote last, until the informers hold it, stands for a read when the write would go
    // ahead on it: a write by anyone else the informers have not delivered yet makes the write answer 409 and
    // the retry reads. Any refusal, the API's rules or the sender's (ADR 0022), is decided on a fresh read: a
    // person's decision written since this gateway's own write would otherwise make a sender's patch that
    // carries it look like recording one. Without a remembered write (none, or the informers hold it), the
    // informers' copy stands in the same way on the first attempt (a 409 retries on a read).
    const taken = this.written.take(key);
    const remembered = taken ?? (firstAttempt ? (this.cached(command.target) ?? undefined) : undefined);
    let judged = remembered === undefined ? undefined : judgeStatus(command, guard, remembered);
    if (judged?.kind !== 'write') {
      try {
        const fresh = await this.objects.read(identify(command.target));
        judged = judgeStatus(command, guard, fresh);
      } catch (err) {
        return outcomeOfError(err);
      }
    }
    if (judged.kind === 'refuse') return judged.outcome;
    const body = { ...judged.current, status: judged.status };
    try {
      const written = await this.objects.replaceStatus(identify(command.target), body);
      this.rememberWrite(command.target, written);
      return { kind: 'applied', resourceVersion: written.metadata?.resourceVersion };
    } catch (err) {
      return outcomeOfError(err);
    }
  }

  private async applyResource(
    command: Extract<K8sCommandV1, { command: 'apply-resource' }>,
    guard: WriteGuard | undefined,
    firstAttempt: boolean,
  ): Promise<CommandOutcome> {
    const { target, object } = command;
    const meta = isObject(object['metadata']) ? object['metadata'] : {};
    const { status: _ignored, ...withoutStatus } = object;
    const desired: KubernetesObject = {
      ...withoutStatus,
      apiVersion: target.apiVersion,
      kind: target.kind,
      metadata: { ...meta, name: target.name, namespace: target.namespace },
    };
    const coords = command.status === undefined ? undefined : this.customCoordinates(target);
    if (command.status !== undefined && !coords) {
      return {
        kind: 'rejected',
        code: 400,
        reason: 'BadRequest',
        message: `${target.kind} has no status subresource the gateway writes`,
      };
    }
    type Read = { ok: true; current: KubernetesObject | undefined } | { ok: false; outcome: CommandOutcome };
    const read = async (): Promise<Read> => {
      try {
        return { ok: true, current: await this.objects.read(identify(target)) };
      } catch (err) {
        if (err instanceof ApiException && Number(err.code) === 404) return { ok: true, current: undefined };
        return { ok: false, outcome: outcomeOfError(err) };
      }
    };
    const judge = (current: KubernetesObject | undefined) =>
      guarded(guard, {
        current: current as Json | undefined,
        desired: desired as Json,
        ...(command.status === undefined ? {} : { nextStatus: command.status }),
      });
    // Known absent: created without a read (a create of an object that exists after all answers 409, and the
    // retry reads). A refusal is decided on a read, never on the informers' view.
    const absent = firstAttempt && this.cached(target) === null;
    let found: Read = absent ? { ok: true, current: undefined } : await read();
    if (!found.ok) return found.outcome;
    let refused = judge(found.current);
    if (refused !== undefined && absent) {
      found = await read();
      if (!found.ok) return found.outcome;
      refused = judge(found.current);
    }
    const current = found.current;
    if (refused !== undefined) return refused;
    if (current !== undefined && command.createOnly === true) {
      // Create-only: whoever created it first wins; the existing object stays exactly as it is.
      return { kind: 'applied', resourceVersion: current.metadata?.resourceVersion };
    }
    let written: KubernetesObject;
    try {
      // A concurrent create answers 409 AlreadyExists: the retry reads and replaces it (or, create-only, keeps it).
      written =
        current === undefined
          ? await this.objects.create(desired)
          : await this.objects.replace({
              ...desired,
              metadata: { ...desired.metadata, resourceVersion: current.metadata?.resourceVersion },
            });
    } catch (err) {
      return outcomeOfError(err);
    }
    if (command.status === undefined || !coords) {
      return { kind: 'applied', resourceVersion: written.metadata?.resourceVersion };
    }
    try {
      // Based on the object just written: a 409 here re-runs the whole command (replace, then status).
      const withStatus = await this.objects.replaceStatus(identify(target), {
        ...written,
        status: command.status,
      });
      this.rememberWrite(target, withStatus);
      return { kind: 'applied', resourceVersion: withStatus.metadata?.resourceVersion };
    } catch (err) {
      return outcomeOfError(err);
    }
  }

  private async setFinalizer(
    command: Extract<K8sCommandV1, { command: 'set-finalizer' }>,
    guard: WriteGuard | undefined,
  ): Promise<CommandOutcome> {
    const { target, finalizer, present } = command;
    if (!this.customCoordinates(target)) {
      return {
        kind: 'rejected',
        code: 400,
        reason: 'BadRequest',
        message: `${target.kind} is not a kind whose finalizers the gateway manages`,
      };
    }
    let current: KubernetesObject;
    try {
      current = await this.objects.read(identify(target));
    } catch (err) {
      // Removing a finalizer of an object that is gone is done already.
      if (!present && err instanceof ApiException && Number(err.code) === 404) {
        return { kind: 'applied', resourceVersion: undefined };
      }
      return outcomeOfError(err);
    }
    if (target.uid !== undefined && target.uid !== current.metadata?.uid) {
      if (!present) return { kind: 'applied', resourceVersion: undefined };
      return {
        kind: 'rejected',
        code: 409,
        reason: 'Conflict',
        message: 'the object was replaced by another with the same name',
      };
    }
    const refused = guarded(guard, { current: current as Json });
    if (refused !== undefined) return refused;
    const finalizers = current.metadata?.finalizers ?? [];
    if (finalizers.includes(finalizer) === present) {
      return { kind: 'applied', resourceVersion: current.metadata?.resourceVersion };
    }
    if (present && current.metadata?.deletionTimestamp !== undefined) {
      return {
        kind: 'rejected',
        code: 409,
        reason: 'Conflict',
        message: 'no finalizer is added to an object that is being deleted',
      };
    }
    const next = present ? [...finalizers, finalizer] : finalizers.filter((f) => f !== finalizer);
    try {
      const written = await this.objects.replace({
        ...current,
        metadata: { ...current.metadata, finalizers: next },
      });
      return { kind: 'applied', resourceVersion: written?.metadata?.resourceVersion };
    } catch (err) {
      if (!present && err instanceof ApiException && Number(err.code) === 404) {
        return { kind: 'applied', resourceVersion: undefined };
      }
      return outcomeOfError(err);
    }
  }

  private async deleteResource(target: Target, guard: WriteGuard | undefined): Promise<CommandOutcome> {
    this.written.forget(objectKey(target));
    let resourceVersion: string | undefined;
    if (guard !== undefined) {
      // A sender's delete is decided on the object as it is; the delete then holds to that version.
      let current: KubernetesObject;
      try {
        current = await this.objects.read(identify(target));
      } catch (err) {
        if (err instanceof ApiException && Number(err.code) === 404)
          return { kind: 'applied', resourceVersion: undefined };
        return outcomeOfError(err);
      }
      if (target.uid !== undefined && target.uid !== current.metadata?.uid)
        return {
          kind: 'rejected',
          code: 409,
          reason: 'Conflict',
          message: 'the object was replaced by another with the same name',
        };
      const refused = guarded(guard, { current: current as Json });
      if (refused !== undefined) return refused;
      resourceVersion = current.metadata?.resourceVersion;
    }
    const preconditions = {
      ...(target.uid === undefined ? {} : { uid: target.uid }),
      ...(resourceVersion === undefined ? {} : { resourceVersion }),
    };
    try {
      await this.objects.objects.delete(
        {
          apiVersion: target.apiVersion,
          kind: target.kind,
          metadata: { name: target.name, namespace: target.namespace },
        },
        undefined,
        undefined,
        undefined,
        undefined,
        'Background',
        Object.keys(preconditions).length === 0 ? undefined : { preconditions },
      );
      return { kind: 'applied', resourceVersion: undefined };
    } catch (err) {
      if (err instanceof ApiException && Number(err.code) === 404)
        return { kind: 'applied', resourceVersion: undefined };
      // Changed since the guard read it: read and decide again.
      if (err instanceof ApiException && Number(err.code) === 409 && resourceVersion !== undefined)
        throw new Conflict();
      if (err instanceof ApiException && Number(err.code) === 409 && target.uid !== undefined) {
        // The uid precondition failed: the name now belongs to a different object, which must survive.
        return {
          kind: 'rejected',
          code: 409,
          reason: 'Conflict',
          message: 'the object was replaced by another with the same name',
        };
      }
      return outcomeOfError(err);
    }
  }
}

/** A status write judged on one reading of the object: written as merged, or refused with the outcome. */
type StatusJudgement =
  | { readonly kind: 'write'; readonly current: KubernetesObject; readonly status: unknown }
  | { readonly kind: 'refuse'; readonly outcome: CommandOutcome };

function judgeStatus(
  command: Extract<K8sCommandV1, { command: 'patch-status' }>,
  guard: WriteGuard | undefined,
  current: KubernetesObject,
): StatusJudgement {
  const refusal = statusRefusal(command, current);
  if (refusal !== undefined) return { kind: 'refuse', outcome: refusal };
  const status = mergePatch((current as Json)['status'], command.status);
  const refused = guarded(guard, { current: current as Json, nextStatus: status as Json });
  return refused === undefined ? { kind: 'write', current, status } : { kind: 'refuse', outcome: refused };
}
