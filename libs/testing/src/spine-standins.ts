// The other services' side of the spine, played in a process that runs one service without them (the
// executor's cluster tests, `npm run bench -- execution`): the k8s-gateway's resource events (a Secret as
// its metadata and key names, never its values) and its answers to Secret reads from the Secrets published,
// the objects as the API holds them, and the planner's approval recorded in an execution request.
import { jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  resourceSubject,
  serveSecretAccess,
  SUBJECT_ROOT,
  type ExecuteRequestV2,
  type SecretResponder,
  type StoredSecret,
} from '@rolepolicy/contracts';
import type { PostgresPolicyPlan } from '@rolepolicy/plan-lifecycle';

const API_VERSION = 'rolepolicy.io/v1alpha1';

/** The kinds a stand-in gateway publishes. */
export type StandinKind =
  'secret' | 'postgrespolicy' | 'postgrespolicyplan' | 'ephemeralaccessrequest' | 'ephemeralaccesspolicy';

/** The Secrets the API "has", keyed `namespace/name`, answered as the gateway answers reads of them. */
export class ApiSecrets {
  private readonly byKey = new Map<string, StoredSecret>();

  /** Records a Secret as created or changed (`upsert`) or deleted. */
  note(namespace: string, name: string, secret: StoredSecret, type: 'upsert' | 'delete'): void {
    if (type === 'delete') this.byKey.delete(`${namespace}/${name}`);
    else this.byKey.set(`${namespace}/${name}`, secret);
  }

  /** Answers Secret reads under `root` (every key of every Secret may be read); generating one is refused. */
  serve(
    nc: NatsConnection,
    options: { readonly root?: string; readonly queue: string; readonly warn?: (line: string) => void },
  ): SecretResponder {
    const root = options.root ?? SUBJECT_ROOT;
    return serveSecretAccess(nc, {
      readSubject: `${root}.k8s.secret.read`,
      generateSubject: `${root}.k8s.secret.generate`,
      queue: options.queue,
      store: {
        read: async (namespace, name) => this.byKey.get(`${namespace}/${name}`),
        mayRead: () => ({ ok: true }),
        literalPassword: async () => undefined,
        createIfAbsent: async () => {
          throw new Error('the stand-in gateway creates no Secrets');
        },
      },
      log: { warn: options.warn ?? (() => undefined) },
    });
  }
}

/**
 * Publishes `object` on the resource stream as the gateway does (`upsert`, or its deletion); a Secret goes
 * as its metadata and key names, and its values to `secrets` (what the API answers reads with).
 */
export async function publishAsGateway<
  T extends { readonly metadata: { readonly name: string; readonly namespace?: string } },
>(
  nc: NatsConnection,
  kind: StandinKind,
  object: T,
  options: { readonly root?: string; readonly type?: 'upsert' | 'delete'; readonly secrets: ApiSecrets },
): Promise<void> {
  const { name, namespace = '' } = object.metadata;
  const type = options.type ?? 'upsert';
  let published: object = object;
  if (kind === 'secret') {
    options.secrets.note(namespace, name, object as StoredSecret, type);
    const { data, ...rest } = object as { data?: Record<string, string> };
    published = { ...rest, keys: Object.keys(data ?? {}).sort() };
  }
  const event = { v: 1, type, object: published, observedAt: new Date().toISOString() };
  await jetstream(nc).publish(
    resourceSubject(kind, namespace, name, options.root),
    new TextEncoder().encode(JSON.stringify(event)),
  );
}

/** A Secret holding `data` (base64-encoded as the API returns it) at `resourceVersion`. */
export function secretObject(
  namespace: string,
  name: string,
  data: Readonly<Record<string, string>>,
  resourceVersion = '1',
): {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; resourceVersion: string };
  data: Record<string, string>;
} {
  const encoded = Object.fromEntries(
    Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'utf8').toString('base64')]),
  );
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace, resourceVersion }, data: encoded };
}

/** A PostgresPolicy at generation 1 with `spec`. */
export function policyObject<S extends object>(namespace: string, name: string, uid: string, spec: S) {
  return {
    apiVersion: API_VERSION,
    kind: 'PostgresPolicy' as const,
    metadata: { name, namespace, uid, generation: 1 },
    spec,
  };
}

/** What a plan records of the planner's computation: the change digest and the target's identity. */
export interface ApprovedDigest {
  readonly digest: string;
  readonly encoding: string;
  readonly physical: string | null;
  readonly logical: string | null;
}

/** Who decided a plan and why (the decision condition's reason and `decidedBy`). */
export interface Decider {
  readonly reason: string;
  readonly username: string;
}

/**
 * A plan of policy `policyName` recording `approved`, with the decision condition (`Approved` or `Denied`)
 * and phase; a person decided it unless `by` says otherwise (the fleet's plans are `AutoApproved`).
 */
export function planObject(
  namespace: string,
  name: string,
  policyName: string,
  approved: ApprovedDigest,
  decision: 'Approved' | 'Denied',
  phase: 'Approved' | 'Pending' | 'Rejected' = decision === 'Approved' ? 'Approved' : 'Pending',
  by: Decider = {
    reason: decision === 'Approved' ? 'ApprovedByUser' : 'DeniedByUser',
    username: 'tester',
  },
): PostgresPolicyPlan {
  return {
    apiVersion: API_VERSION,
    kind: 'PostgresPolicyPlan',
    metadata: { name, namespace },
    spec: {
      managedDatabaseIdentity: approved.logical ?? 'unknown',
      policyGeneration: 1,
      policyRef: { name: policyName },
      reconciliationMode: 'authoritative',
    },
    status: {
      phase,
      conditions: [
        {
          type: decision,
          status: 'True',
          reason: by.reason,
          message: `decided by ${by.username}`,
          last_transition_time: new Date().toISOString(),
        },
      ],
      decidedBy: { username: by.username },
      changeDigest: approved.digest,
      changeDigestEncoding: approved.encoding,
      targetPhysicalIdentity: approved.physical,
      targetLogicalFingerprint: approved.logical,
    },
  };
}

/**
 * `draft` as the planner sends it once it planned on `snapshot`: the change digest approved, the target's
 * identity recorded, the idempotency key bound to the digest.
 */
export function withPlannerApproval(
  draft: ExecuteRequestV2,
  digest: { readonly digest: string; readonly encoding: string },
  snapshot: {
    readonly identity: { readonly physical: string | null; readonly logical_fingerprint: string | null };
  },
): ExecuteRequestV2 {
  return {
    ...draft,
    changeDigest: digest.digest,
    changeDigestEncoding: digest.encoding,
    idempotencyKey: `${draft.idempotencyKey}/${digest.digest}`,
    approvedIdentity: {
      physical: snapshot.identity.physical,
      logical: snapshot.identity.logical_fingerprint,
    },
  };
}
