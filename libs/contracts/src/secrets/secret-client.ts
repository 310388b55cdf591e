// The requester's side of `rp.k8s.secret.read` / `rp.k8s.secret.generate`: values come from the API's
// current object through the k8s-gateway, opened in memory, and are never stored by this module.
import type { NatsConnection } from '@nats-io/transport-node';
import { decodePayload, encodePayload } from '../contract.js';
import {
  secretBundleContract,
  secretGenerateReplyContract,
  secretGenerateRequestContract,
  secretReadReplyContract,
  secretReadRequestContract,
  type SecretAccessRefusal,
  type SecretGenerateRequestV1,
} from '../messages/secret-access.js';
import { SUBJECTS } from '../subjects.js';
import { open, replyKeyPair } from './seal.js';

/** A Secret as read (shape-compatible with `@rolepolicy/kube`'s SecretLike). */
export interface ReadSecret {
  readonly metadata: { readonly name: string; readonly uid: string; readonly resourceVersion: string };
  /** uid of the object controlling the Secret, when it has a controller ownerReference. */
  readonly controllerUid?: string;
  /** Base64 values, as the API returns them. */
  readonly data: Readonly<Record<string, string>>;
}

/** What one read returned: the Secrets found (by name), the names the API does not have. */
export interface SecretReadResult {
  readonly secrets: ReadonlyMap<string, ReadSecret>;
  readonly missing: readonly string[];
  /** The policy's literal connection password, when asked for and set. */
  readonly literalPassword?: string;
}

/** Why a read or generation failed; the message names subjects and objects, never values. */
export class SecretAccessError extends Error {
  override readonly name = 'SecretAccessError';
  constructor(
    /** `Unavailable` when no gateway answered in time; otherwise the gateway's refusal reason. */
    readonly reason: SecretAccessRefusal['reason'] | 'Unavailable' | 'InvalidReply',
    message: string,
  ) {
    super(message);
  }

  /** True when asking again later may succeed (no gateway, API down, leader changing). */
  get transient(): boolean {
    return this.reason === 'Unavailable' || this.reason === 'ApiUnavailable' || this.reason === 'NotLeader';
  }
}

/** Options of {@link SecretAccessClient}. */
export interface SecretAccessClientOptions {
  /** Default `rp.k8s.secret.read` (sandboxes pass their own). */
  readonly readSubject?: string;
  /** Default `rp.k8s.secret.generate`. */
  readonly generateSubject?: string;
  /** Total time to get an answer, retrying while no gateway responds (e.g. during failover); default 10 s. */
  readonly timeoutMs?: number;
}

const RETRY_MS = 200;
const ATTEMPT_MS = 3_000;

/**
 * Reads Secret values and asks for generated-password Secrets.
 * @example
 * const secrets = new SecretAccessClient(nc);
 * const { secrets: found } = await secrets.read('team-a', ['orders-db']);
 */
export class SecretAccessClient {
  private readonly readSubject: string;
  private readonly generateSubject: string;
  private readonly timeoutMs: number;

  constructor(
    private readonly nc: NatsConnection,
    options: SecretAccessClientOptions = {},
  ) {
    this.readSubject = options.readSubject ?? SUBJECTS.secretRead;
    this.generateSubject = options.generateSubject ?? SUBJECTS.secretGenerate;
    this.timeoutMs = options.timeoutMs ?? 10_000;
  }

  /** Reads `names` in `namespace` as the API has them now (and a policy's literal password if asked). */
  async read(
    namespace: string,
    names: readonly string[],
    options: { readonly literalPasswordOf?: string } = {},
  ): Promise<SecretReadResult> {
    const unique = [...new Set(names)].sort();
    if (unique.length === 0 && options.literalPasswordOf === undefined) {
      return { secrets: new Map(), missing: [] };
    }
    const keys = replyKeyPair();
    const bytes = await this.request(
      this.readSubject,
      encodePayload(secretReadRequestContract, {
        v: 1,
        namespace,
        names: unique,
        replyKey: keys.publicKey,
        ...(options.literalPasswordOf === undefined ? {} : { literalPasswordOf: options.literalPasswordOf }),
      }),
    );
    const reply = decodePayload(secretReadReplyContract, bytes);
    if (!reply.ok) throw new SecretAccessError('InvalidReply', `invalid Secret read reply: ${reply.detail}`);
    if (!reply.value.ok) throw new SecretAccessError(reply.value.error.reason, reply.value.error.message);
    let opened: Uint8Array;
    try {
      opened = open(reply.value.sealed, keys);
    } catch {
      throw new SecretAccessError('InvalidReply', 'the Secret read reply could not be opened');
    }
    const bundle = decodePayload(secretBundleContract, opened);
    if (!bundle.ok) throw new SecretAccessError('InvalidReply', `invalid Secret bundle: ${bundle.detail}`);
    const secrets = new Map<string, ReadSecret>();
    for (const s of bundle.value.secrets) {
      secrets.set(s.name, {
        metadata: { name: s.name, uid: s.uid, resourceVersion: s.resourceVersion },
        ...(s.controllerUid === undefined ? {} : { controllerUid: s.controllerUid }),
        data: s.data,
      });
    }
    return {
      secrets,
      missing: bundle.value.missing,
      ...(bundle.value.literalPassword === undefined
        ? {}
        : { literalPassword: bundle.value.literalPassword }),
    };
  }

  /**
   * Asks the gateway to create a generated-password Secret from `template` (create-only: an existing one
   * keeps its password). The reply names the Secret's version, never the password.
   */
  async generate(
    request: Omit<SecretGenerateRequestV1, 'v'>,
  ): Promise<{ readonly created: boolean; readonly uid: string; readonly resourceVersion: string }> {
    const bytes = await this.request(
      this.generateSubject,
      encodePayload(secretGenerateRequestContract, { v: 1, ...request }),
    );
    const reply = decodePayload(secretGenerateReplyContract, bytes);
    if (!reply.ok)
      throw new SecretAccessError('InvalidReply', `invalid Secret generate reply: ${reply.detail}`);
    if (!reply.value.ok) throw new SecretAccessError(reply.value.error.reason, reply.value.error.message);
    return {
      created: reply.value.created,
      uid: reply.value.uid,
      resourceVersion: reply.value.resourceVersion,
    };
  }

  /** Sends until a gateway answers or the time is up; a gateway that is not leading says so, and is asked again. */
  private async request(subject: string, payload: Uint8Array): Promise<Uint8Array> {
    const deadline = Date.now() + this.timeoutMs;
    let last = 'no answer';
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) break;
      try {
        // Bounded per attempt: a request sent before the leader subscribed may just go unanswered.
        const msg = await this.nc.request(subject, payload, {
          timeout: Math.max(100, Math.min(left, ATTEMPT_MS)),
        });
        return msg.data;
      } catch (error) {
        last = error instanceof Error ? error.message.split('\n')[0]! : String(error);
      }
      await new Promise((resolve) =>
        setTimeout(resolve, Math.min(RETRY_MS, Math.max(0, deadline - Date.now()))),
      );
    }
    throw new SecretAccessError(
      'Unavailable',
      `no k8s-gateway answered ${subject} in ${this.timeoutMs} ms (${last})`,
    );
  }
}
