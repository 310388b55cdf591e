// What became of one k8s-gateway command, and how the consumer treats it: ack, redeliver or report.
// Messages are the API server's (field paths and rule texts), never object values.

/** Result of applying a command to the Kubernetes API. */
export type CommandOutcome =
  /** Written (or already in the requested state, e.g. deleting something gone). */
  | { readonly kind: 'applied'; readonly resourceVersion: string | undefined }
  /** The sender decided on a resourceVersion that is no longer current: it must re-decide. */
  | { readonly kind: 'stale'; readonly expected: string; readonly current: string | undefined }
  /** Still conflicting after the bounded retries: redeliver later. */
  | { readonly kind: 'conflict'; readonly attempts: number }
  /** The API refused it for good (invalid, forbidden, missing target): report, do not retry. */
  | { readonly kind: 'rejected'; readonly code: number; readonly reason: string; readonly message: string }
  /**
   * The sender may not send this command (ADR 0022): not its kind, namespace, fields or object, or a
   * decision it may not record. Never applied, never retried; reported, logged and counted.
   */
  | { readonly kind: 'refused'; readonly sender: string; readonly message: string }
  /** The API could not be reached or failed on its side: redeliver later. */
  | { readonly kind: 'unavailable'; readonly message: string }
  /**
   * The sender's leader term is over (ADR 0011): its epoch is not the lease's current one. Dropped
   * unapplied; the current leader decides again from fresh state.
   */
  | {
      readonly kind: 'fenced';
      readonly lease: string;
      readonly epoch: number;
      readonly current: number | undefined;
    };

/** What the consumer does with the message for an outcome. */
export type Disposition = 'ack' | 'redeliver' | 'report' | 'drop';

/**
 * Maps an outcome to its disposition; `report` means ack plus a Warning Event on the target, `drop` ack
 * with a log line only (nobody to tell: the sender no longer leads).
 */
export function dispositionOf(outcome: CommandOutcome): Disposition {
  switch (outcome.kind) {
    case 'applied':
      return 'ack';
    case 'stale':
    case 'rejected':
    case 'refused':
      return 'report';
    case 'conflict':
    case 'unavailable':
      return 'redeliver';
    case 'fenced':
      return 'drop';
    default: {
      const never: never = outcome;
      return never;
    }
  }
}

/** One-line description for logs and Events. */
export function describeOutcome(outcome: CommandOutcome): string {
  switch (outcome.kind) {
    case 'applied':
      return `applied at resourceVersion ${outcome.resourceVersion ?? '?'}`;
    case 'stale':
      return `based on resourceVersion ${outcome.expected}, but the object is at ${outcome.current ?? 'nothing'}`;
    case 'conflict':
      return `still conflicting after ${outcome.attempts} attempts`;
    case 'rejected':
      return `rejected (${outcome.code} ${outcome.reason}): ${outcome.message}`;
    case 'refused':
      return `refused (${outcome.sender}): ${outcome.message}`;
    case 'unavailable':
      return `API unavailable: ${outcome.message}`;
    case 'fenced':
      return `refused: sent in epoch ${outcome.epoch} of lease ${outcome.lease}, which is at ${outcome.current ?? 'nothing'} now`;
    default: {
      const never: never = outcome;
      return never;
    }
  }
}
