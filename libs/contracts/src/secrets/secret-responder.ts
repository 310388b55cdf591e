// The k8s-gateway's side of `rp.k8s.secret.read` / `rp.k8s.secret.generate`: answers from a SecretStore
// (production: the Kubernetes API, read at the moment of the request), seals read replies to the
// requester's one-time key, and draws generated passwords where the Secret is written. Stores nothing.
import { randomBytes } from 'node:crypto';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import {
  SCRAM_DEFAULT_ITERATIONS,
  SCRAM_SALT_LENGTH,
  generatedSecretData,
  passwordFromRandomBytes,
  scramSha256Verifier,
} from '@rolepolicy/policy';
import { decodePayload, encodePayload } from '../contract.js';
import {
  secretBundleContract,
  secretGenerateReplyContract,
  secretGenerateRequestContract,
  secretReadReplyContract,
  secretReadRequestContract,
  type SecretAccessRefusal,
  type SecretBundleV1,
  type SecretGenerateRequestV1,
  type SecretValue,
} from '../messages/secret-access.js';
import { InvalidReplyKeyError, seal } from './seal.js';

/** A Secret as a store returns it. */
export interface StoredSecret {
  readonly metadata?: {
    readonly name?: string;
    readonly uid?: string;
    readonly resourceVersion?: string;
    readonly labels?: Readonly<Record<string, string>> | null;
    readonly ownerReferences?: readonly { readonly uid?: string; readonly controller?: boolean }[];
  } | null;
  readonly data?: Readonly<Record<string, string>> | null;
  readonly stringData?: Readonly<Record<string, string>> | null;
}

/** A Secret to create, with its data. */
export type NewSecret = SecretGenerateRequestV1['template'] & {
  readonly data: Readonly<Record<string, string>>;
};

/** Raised by a store when the API cannot answer now (the requester retries later). */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
}

/** Where the responder reads and writes; every method answers from the API's current state. */
export interface SecretStore {
  /** The Secret now, or undefined when the API does not have it. */
  read(namespace: string, name: string): Promise<StoredSecret | undefined>;
  /**
   * Whether this Secret may be read: a rolepolicy.io object names or owns it, and the installation's rule
   * (SECRET_READ_POLICY, ADR 0018) admits it. A refusal names the Secret and the rule, never a value.
   */
  mayRead(namespace: string, name: string, secret: StoredSecret): SecretReadVerdict;
  /** `spec.connection.params.password` of a PostgresPolicy when it is a literal string. */
  literalPassword(namespace: string, policy: string): Promise<string | undefined>;
  /** Creates the Secret unless it exists; either way returns the one the API now has. */
  createIfAbsent(secret: NewSecret): Promise<{ created: boolean; uid: string; resourceVersion: string }>;
}

/** Whether a Secret may be read, or the refusal to answer with. */
export type SecretReadVerdict =
  /** `keys`: the only keys to answer (absent: every key, e.g. a Secret rolepolicy owns). */
  | { readonly ok: true; readonly keys?: readonly string[] }
  | { readonly ok: false; readonly reason: 'NotReferenced' | 'NotLabelled'; readonly message: string };

/** Options of {@link serveSecretAccess}. */
export interface SecretResponderOptions {
  readonly readSubject: string;
  readonly generateSubject: string;
  /** Queue group, so replicas answering at once split the requests. */
  readonly queue: string;
  readonly store: SecretStore;
  /** Warnings name subjects and objects, never values. */
  readonly log: { warn(message: string): void };
  /** The rolepolicy.io API group an owner must belong to (default `rolepolicy.io`). */
  readonly ownerGroup?: string;
}

/** A running responder. */
export interface SecretResponder {
  stop(): Promise<void>;
}

/**
 * The message of a store failure as the requester sees it: a StoreUnavailableError's own (written to name
 * objects only), anything else replaced, since a client library's error can carry a response body.
 */
function unavailable(error: unknown, options: SecretResponderOptions): string {
  if (error instanceof StoreUnavailableError) return error.message;
  options.log.warn(`Secret store failed unexpectedly (${(error as Error).name ?? 'error'})`);
  return 'the Kubernetes API could not answer';
}

function refusal(reason: SecretAccessRefusal['reason'], message: string) {
  return { v: 1 as const, ok: false as const, error: { reason, message: message.slice(0, 1024) } };
}

function controllerOf(secret: StoredSecret): { controllerUid?: string } {
  const uid = secret.metadata?.ownerReferences?.find((r) => r.controller === true)?.uid;
  return uid === undefined ? {} : { controllerUid: uid };
}

function utf8Data(secret: StoredSecret): Record<string, string> {
  const data: Record<string, string> = { ...(secret.data ?? {}) };
  for (const [k, v] of Object.entries(secret.stringData ?? {}))
    data[k] = Buffer.from(v, 'utf8').toString('base64');
  return data;
}

function onlyKeys(data: Record<string, string>, keys: readonly string[] | undefined): Record<string, string> {
  if (keys === undefined) return data;
  return Object.fromEntries(Object.entries(data).filter(([key]) => keys.includes(key)));
}

/** Subscribes both subjects and answers until stopped. */
export function serveSecretAccess(nc: NatsConnection, options: SecretResponderOptions): SecretResponder {
  const inFlight = new Set<Promise<void>>();
  const track = (work: Promise<void>): void => {
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));
  };
  const subscribe = (subject: string, answer: (msg: Msg) => Promise<void>): Subscription =>
    nc.subscribe(subject, {
      queue: options.queue,
      callback: (error, msg) => {
        if (error) options.log.warn(`${subject}: subscription error: ${error.message}`);
        else
          track(answer(msg).catch((e: unknown) => options.log.warn(`${subject}: ${(e as Error).message}`)));
      },
    });
  const subscriptions = [
    subscribe(options.readSubject, (msg) => answerRead(msg, options)),
    subscribe(options.generateSubject, (msg) => answerGenerate(msg, options)),
  ];
  return {
    stop: async () => {
      for (const s of subscriptions) s.unsubscribe();
      await Promise.allSettled([...inFlight]);
    },
  };
}

async function answerRead(msg: Msg, options: SecretResponderOptions): Promise<void> {
  const respond = (reply: Parameters<typeof encodePayload<typeof secretReadReplyContract>>[1]) =>
    msg.respond(encodePayload(secretReadReplyContract, reply));
  const decoded = decodePayload(secretReadRequestContract, msg.data);
  if (!decoded.ok) {
    respond(refusal('InvalidRequest', `invalid Secret read request: ${decoded.detail}`));
    return;
  }
  const request = decoded.value;
  const { namespace } = request;
  try {
    const secrets: SecretValue[] = [];
    const missing: string[] = [];
    for (const name of request.names) {
      const secret = await options.store.read(namespace, name);
      if (secret === undefined) {
        missing.push(name);
        continue;
      }
      const verdict = options.store.mayRead(namespace, name, secret);
      if (!verdict.ok) {
        respond(refusal(verdict.reason, verdict.message));
        return;
      }
      secrets.push({
        name,
        uid: secret.metadata?.uid ?? '',
        resourceVersion: secret.metadata?.resourceVersion ?? '',
        ...controllerOf(secret),
        data: onlyKeys(utf8Data(secret), verdict.keys),
      });
    }
    const literalPassword =
      request.literalPasswordOf === undefined
        ? undefined
        : await options.store.literalPassword(namespace, request.literalPasswordOf);
    const bundle: SecretBundleV1 = {
      v: 1,
      secrets,
      missing,
      ...(literalPassword === undefined ? {} : { literalPassword }),
    };
    respond({ v: 1, ok: true, sealed: seal(encodePayload(secretBundleContract, bundle), request.replyKey) });
  } catch (error) {
    if (error instanceof InvalidReplyKeyError) respond(refusal('InvalidRequest', error.message));
    else respond(refusal('ApiUnavailable', unavailable(error, options)));
  }
}

async function answerGenerate(msg: Msg, options: SecretResponderOptions): Promise<void> {
  const respond = (reply: Parameters<typeof encodePayload<typeof secretGenerateReplyContract>>[1]) =>
    msg.respond(encodePayload(secretGenerateReplyContract, reply));
  const decoded = decodePayload(secretGenerateRequestContract, msg.data);
  if (!decoded.ok) {
    respond(refusal('InvalidRequest', `invalid Secret generate request: ${decoded.detail}`));
    return;
  }
  const { template, secretKey, length } = decoded.value;
  const group = options.ownerGroup ?? 'rolepolicy.io';
  const owner = template.metadata.ownerReferences[0]!;
  if (!owner.apiVersion.startsWith(`${group}/`) || owner.controller !== true) {
    respond(
      refusal(
        'InvalidRequest',
        `Secret ${template.metadata.namespace}/${template.metadata.name}: a generated Secret must be controlled by a ${group} object`,
      ),
    );
    return;
  }
  let data: Readonly<Record<string, string>>;
  try {
    const password = passwordFromRandomBytes(randomBytes(length), length);
    const verifier = scramSha256Verifier(password, randomBytes(SCRAM_SALT_LENGTH), SCRAM_DEFAULT_ITERATIONS);
    data = generatedSecretData(secretKey, password, verifier);
  } catch (error) {
    respond(refusal('InvalidRequest', (error as Error).message));
    return;
  }
  try {
    const written = await options.store.createIfAbsent({ ...template, data });
    respond({ v: 1, ok: true, ...written });
  } catch (error) {
    respond(refusal('ApiUnavailable', unavailable(error, options)));
  }
}
