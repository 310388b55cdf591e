// Refuses, without calling the API, a command about an object the API does not have: its target (by uid)
// or, for a create, the controlling owner it names. Such commands come from a view older than the API's (a
// restore, a new cluster, a delete while the gateway was away) and must not write anything.
import type { K8sCommandV1 } from '@rolepolicy/contracts';
import type { CommandOutcome } from './command-outcome.js';

/** Whether the informers hold the object with that uid (undefined: the kind is not watched). */
export type HasObject = (kind: string, namespace: string, name: string, uid: string) => boolean | undefined;

type OwnerReference = { controller?: boolean; kind?: string; name?: string; uid?: string };

const notFound = (message: string): CommandOutcome => ({
  kind: 'rejected',
  code: 404,
  reason: 'NotFound',
  message,
});

/** The outcome of a command whose object is absent, or undefined when the command goes to the API. */
export function absentTargetOutcome(command: K8sCommandV1, has: HasObject): CommandOutcome | undefined {
  const { target } = command;
  const missing = (kind: string, name: string, uid: string | undefined): boolean =>
    uid !== undefined && has(kind, target.namespace, name, uid) === false;
  const noTarget = `the API has no ${target.kind} ${target.namespace}/${target.name} with uid ${target.uid}`;
  switch (command.command) {
    case 'delete-resource':
    case 'record-event':
      // Nothing to delete, nobody to tell: an Event about an object that is gone is dropped.
      return missing(target.kind, target.name, target.uid)
        ? { kind: 'applied', resourceVersion: undefined }
        : undefined;
    case 'set-finalizer':
      if (!missing(target.kind, target.name, target.uid)) return undefined;
      return command.present ? notFound(noTarget) : { kind: 'applied', resourceVersion: undefined };
    case 'patch-status':
      return missing(target.kind, target.name, target.uid) ? notFound(noTarget) : undefined;
    default: {
      const metadata = (command.object['metadata'] ?? {}) as { ownerReferences?: unknown };
      const owners: OwnerReference[] = Array.isArray(metadata.ownerReferences)
        ? metadata.ownerReferences
        : [];
      const gone = owners.find(
        (o) =>
          o.controller === true &&
          o.kind !== undefined &&
          o.name !== undefined &&
          missing(o.kind, o.name, o.uid),
      );
      return gone === undefined
        ? undefined
        : notFound(`the owner ${gone.kind} ${target.namespace}/${gone.name} is not in the API any more`);
    }
  }
}
