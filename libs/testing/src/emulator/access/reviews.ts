// The review kinds, answered from the caller's identity and RBAC rather than stored:
// SelfSubjectReview (`kubectl auth whoami`), SelfSubjectAccessReview (`kubectl auth can-i`),
// SubjectAccessReview and LocalSubjectAccessReview (asking for someone else), SelfSubjectRulesReview
// (`kubectl auth can-i --list`).
import type { AuthorizationAttributes, Authorizer, UserInfo } from '@rolepolicy/kube';
import { badRequest } from '../errors.js';
import type { JsonObject } from '../types.js';
import type { Rbac } from './rbac.js';

type Spec = {
  resourceAttributes?: {
    namespace?: string;
    verb?: string;
    group?: string;
    version?: string;
    resource?: string;
    subresource?: string;
    name?: string;
  };
  nonResourceAttributes?: { path?: string; verb?: string };
  user?: string;
  groups?: string[];
  uid?: string;
  extra?: Record<string, string[]>;
  namespace?: string;
};

function attributesOf(user: UserInfo, spec: Spec): AuthorizationAttributes {
  const r = spec.resourceAttributes;
  if (r) {
    return {
      user,
      verb: r.verb ?? '',
      resource: {
        group: r.group ?? '',
        ...(r.version ? { version: r.version } : {}),
        resource: r.resource ?? '',
        subresource: r.subresource ?? '',
        namespace: r.namespace ?? '',
        name: r.name ?? '',
      },
    };
  }
  const n = spec.nonResourceAttributes;
  if (n) return { user, verb: n.verb ?? '', path: n.path ?? '' };
  throw badRequest('spec: exactly one of resourceAttributes or nonResourceAttributes must be set');
}

function accessStatus(authorize: Authorizer, attributes: AuthorizationAttributes): JsonObject {
  const d = authorize(attributes);
  return {
    allowed: d.decision === 'allow',
    ...(d.decision === 'deny' ? { denied: true } : {}),
    ...(d.reason ? { reason: d.reason } : {}),
  };
}

/** Answers a POST of review `kind` by `user` (`namespace` from the URL for LocalSubjectAccessReview). */
export function answerReview(
  kind: string,
  apiVersion: string,
  body: unknown,
  user: UserInfo,
  authorize: Authorizer,
  rbac: Rbac,
  namespace: string | undefined,
): JsonObject {
  const spec = (((body ?? {}) as JsonObject)['spec'] ?? {}) as Spec;
  const answer = (status: JsonObject, echo: JsonObject = spec) => ({
    kind,
    apiVersion,
    metadata: { creationTimestamp: null },
    spec: echo,
    status,
  });
  switch (kind) {
    case 'SelfSubjectReview':
      return { kind, apiVersion, metadata: { creationTimestamp: null }, status: { userInfo: user } };
    case 'SelfSubjectAccessReview':
      return answer(accessStatus(authorize, attributesOf(user, spec)));
    case 'SubjectAccessReview':
    case 'LocalSubjectAccessReview': {
      if (!spec.user && !spec.groups?.length)
        throw badRequest('spec.user or spec.groups: at least one of user or group must be specified');
      if (kind === 'LocalSubjectAccessReview' && spec.resourceAttributes?.namespace !== namespace)
        throw badRequest(
          `spec.resourceAttributes.namespace must match the request namespace "${namespace ?? ''}"`,
        );
      const subject: UserInfo = {
        username: spec.user ?? '',
        groups: spec.groups ?? [],
        ...(spec.uid ? { uid: spec.uid } : {}),
        ...(spec.extra ? { extra: spec.extra } : {}),
      };
      return answer(accessStatus(authorize, attributesOf(subject, spec)));
    }
    case 'SelfSubjectRulesReview': {
      const rules = rbac.rulesFor(user, spec.namespace ?? '');
      return answer({
        resourceRules: rules
          .filter((r) => r.nonResourceURLs === undefined)
          .map((r) => ({
            verbs: r.verbs ?? [],
            apiGroups: r.apiGroups ?? [],
            resources: r.resources ?? [],
            ...(r.resourceNames?.length ? { resourceNames: r.resourceNames } : {}),
          })),
        nonResourceRules: rules
          .filter((r) => r.nonResourceURLs !== undefined)
          .map((r) => ({ verbs: r.verbs ?? [], nonResourceURLs: r.nonResourceURLs })),
        incomplete: false,
      });
    }
    default:
      throw badRequest(`${kind} cannot be created`);
  }
}
