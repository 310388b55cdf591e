// Carry out: the scoped execution requests the scheduler sends the executor (activate, revoke, and the
// rebuild's sweeps), and when one is sent again. JetStream keeps an unacked request and redelivers it
// itself: asking again is only for a request lost (dead-lettered, or sent by a scheduler that died).
import {
  scopedExecuteRequestContract,
  scopedRequestSubject,
  scopedRevokeRequestContract,
  seenOf,
  type Cached,
  type JetStreamPublisher,
  type ResourceCache,
  type ScopedExecuteRequestV1,
  type ScopedResourceSequences,
} from '@rolepolicy/contracts';
import { API_VERSION } from '@rolepolicy/kube';
import type { ScopeOperation } from '@rolepolicy/policy';
import { revocationDueAt } from '../lifecycle/clock.js';
import { errorText, planNameOf } from '../lifecycle/scoped-plan.js';

type EphemeralAccessRequest = Cached<'ephemeralaccessrequest'>;

/** A scoped request without a report is sent again after this long (the executor's ack wait). */
export const RESEND_MS = 120_000;
/** A Blocked scoped request is asked again after this long. */
export const BLOCKED_RETRY_MS = 30_000;

/** The kinds the executor verifies a scoped plan against, before its lock and under it (scoped-verify.ts). */
const VERIFIED_KINDS = [
  'postgrespolicy',
  'postgrespolicyplan',
  'ephemeralaccessrequest',
  'ephemeralaccesspolicy',
] as const;

/**
 * What the cache had applied of the kinds the executor verifies against when a request is sent: the executor's
 * reads before its lock wait until its own cache has applied as much, without asking the server (ADR 0030,
 * amended). A kind not seen yet is left out (sequences start at 1).
 */
export function scopedSeenBy(cache: Pick<ResourceCache, 'appliedSequence'>): ScopedResourceSequences {
  return seenOf(cache, VERIFIED_KINDS);
}

/** What sending reads and where it goes. */
export interface ScopedRequestDeps {
  /** The scheduler's cache: a request says how far it had read what the executor verifies against. */
  readonly cache: Pick<ResourceCache, 'get' | 'appliedSequence'>;
  readonly publisher: Pick<JetStreamPublisher, 'publish'>;
  readonly log: { warn(m: string): void };
  /** How long a request waits for its result before it is sent again (default {@link RESEND_MS}). */
  readonly resendMs?: number;
  /** Time from expiresAt to publishing the revoke (the scheduler's share of the revocation lag). */
  readonly observeRevokeDispatch?: (seconds: number) => void;
}

/**
 * The scoped request for the request's `operation` plan (pure). `policyName` names the target policy;
 * `planUid` binds the request to the plan the cache shows (absent for a plan whose create was just sent).
 */
export function scopedRequestMessage(
  request: EphemeralAccessRequest,
  operation: ScopeOperation,
  policyName: string,
  planUid: string | undefined,
): ScopedExecuteRequestV1 {
  const ns = request.metadata.namespace;
  const resolved = request.status!.resolvedAccess!;
  return {
    v: 1,
    plan: {
      apiVersion: API_VERSION,
      kind: 'PostgresPolicyPlan',
      namespace: ns,
      name: planNameOf(request, operation),
      ...(planUid ? { uid: planUid } : {}),
    },
    request: {
      apiVersion: API_VERSION,
      kind: 'EphemeralAccessRequest',
      namespace: ns,
      name: request.metadata.name,
      uid: request.metadata.uid ?? '',
    },
    policy: {
      apiVersion: API_VERSION,
      kind: 'PostgresPolicy',
      namespace: ns,
      name: policyName,
      uid: resolved.targetPolicyUid,
    },
    operation,
    bundleHash: resolved.bundleHash,
    idempotencyKey: `${request.metadata.uid}/${operation}/${resolved.bundleHash}`,
  };
}

/** The scoped requests of one scheduler replica, and when each plan's was last sent. */
export class ScopedRequests {
  /** Plan key -> when its scoped request was last sent. */
  private readonly lastSent = new Map<string, number>();

  constructor(private readonly deps: ScopedRequestDeps) {}

  private get resendMs(): number {
    return this.deps.resendMs ?? RESEND_MS;
  }

  /**
   * Asks the executor to run a scoped plan: one the cache shows, or (with `createdFor`, the target policy's
   * name) one whose create command was just published. Not again before the resend delay.
   */
  async send(
    request: EphemeralAccessRequest,
    operation: ScopeOperation,
    now: number,
    createdFor?: string,
  ): Promise<void> {
    const ns = request.metadata.namespace;
    const planName = planNameOf(request, operation);
    const key = `${ns}/${planName}`;
    const plan = this.deps.cache.get('postgrespolicyplan', ns, planName);
    if (plan === undefined && createdFor === undefined) return; // the executor must find it
    // Resending sooner would pile duplicates on a busy executor.
    const last = this.lastSent.get(key);
    if (last !== undefined && now - last < this.resendMs) return;
    const policyName = createdFor ?? plan!.spec.policyRef.name;
    const uid = plan === undefined || createdFor !== undefined ? undefined : plan.metadata.uid;
    const message = {
      ...scopedRequestMessage(request, operation, policyName, uid),
      resourceSequences: scopedSeenBy(this.deps.cache),
    };
    // A resend needs its own message id: JetStream drops a repeated id inside its duplicate window.
    // Revocations on their own subject: the executor consumes them ahead of activations (ADR 0013).
    await this.deps.publisher.publish(
      operation === 'Revoke' ? scopedRevokeRequestContract : scopedExecuteRequestContract,
      scopedRequestSubject(operation),
      message,
      `${message.idempotencyKey}/${now}`,
    );
    const expiresAt = revocationDueAt(request);
    const first = last === undefined;
    this.lastSent.set(key, now);
    if (operation === 'Revoke' && first && expiresAt !== undefined && now >= expiresAt) {
      this.deps.observeRevokeDispatch?.((now - expiresAt) / 1000);
    }
  }

  /** A new (or re-armed) plan: its first request goes without waiting for an older one's resend delay. */
  planCreated(ns: string, planName: string): void {
    this.lastSent.delete(`${ns}/${planName}`);
  }

  /** The executor reported the plan Blocked: ask again after {@link BLOCKED_RETRY_MS} (it may clear). */
  blocked(ns: string, planName: string, now: number): void {
    this.lastSent.set(`${ns}/${planName}`, now - this.resendMs + BLOCKED_RETRY_MS);
  }

  /** Publishes a rebuild's Sweep requests (ADR 0020), on the revocation subject only this service sends. */
  sweep(messages: readonly ScopedExecuteRequestV1[]): void {
    for (const message of messages) {
      this.deps.publisher
        .publish(scopedRevokeRequestContract, scopedRequestSubject('Sweep'), message, message.idempotencyKey)
        .catch((error: unknown) =>
          this.deps.log.warn(
            `sweep of ${message.policy.namespace}/${message.policy.name} not sent: ${errorText(String(error))}`,
          ),
        );
    }
  }
}
