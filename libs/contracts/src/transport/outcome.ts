// What happened to one delivered message, reported to an observer (metrics) by the transport.
// A discriminated union so the metrics side handles every outcome explicitly.

/** Outcome of processing one JetStream delivery. */
export type MessageOutcome =
  | { readonly kind: 'handled'; readonly consumer: string; readonly subject: string }
  | {
      readonly kind: 'retried';
      readonly consumer: string;
      readonly subject: string;
      readonly deliveryCount: number;
      readonly delayMs: number;
    }
  | {
      readonly kind: 'dead_lettered';
      readonly consumer: string;
      readonly subject: string;
      readonly reason: 'invalid_payload' | 'no_contract' | 'redelivery_exhausted';
    }
  | { readonly kind: 'ignored'; readonly consumer: string; readonly subject: string };

/** Receives every {@link MessageOutcome}; must not throw. */
export type OutcomeObserver = (outcome: MessageOutcome) => void;
