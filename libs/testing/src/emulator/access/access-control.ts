// The emulator's request filters in kube-apiserver's order: authentication (bearer tokens), impersonation,
// then authorization (system:masters, then RBAC). With authentication off (the default) every request is
// the admin, impersonation headers are ignored and everything is allowed, as before this existed.
import type { IncomingMessage } from 'node:http';
import type { AuthorizationAttributes, AuthorizationDecision, Authorizer, UserInfo } from '@rolepolicy/kube';
import { forbidden } from '../errors.js';
import type { ObjectStore } from '../store.js';
import type { RequestTarget } from './attributes.js';
import { ADMIN_USER, Authenticator, type TokenUser } from './authn.js';
import { actingUser } from './impersonation.js';
import { Rbac } from './rbac.js';

/** The `authentication` option of startEmulator. */
export type AuthenticationOptions = {
  /** Static bearer tokens (kube-apiserver's --token-auth-file lines). */
  readonly tokens?: readonly TokenUser[];
  /** Requests without a token run as `system:anonymous` (default true, as upstream); false answers 401. */
  readonly anonymous?: boolean;
};

/** Authentication, impersonation and RBAC for one emulator. */
export class AccessControl {
  readonly authenticator: Authenticator | undefined;
  readonly rbac: Rbac;
  /** The authorizer RBAC and the CEL `authorizer` share. */
  readonly authorize: Authorizer;

  constructor(store: ObjectStore, options: AuthenticationOptions | undefined) {
    this.authenticator = options
      ? new Authenticator(options.tokens ?? [], options.anonymous ?? true)
      : undefined;
    this.rbac = new Rbac((plural, namespace) => store.list(`rbac.authorization.k8s.io/${plural}`, namespace));
    this.authorize = (a: AuthorizationAttributes): AuthorizationDecision =>
      this.authenticator ? this.rbac.authorize(a) : { decision: 'allow', reason: '' };
  }

  /** Whether requests are authenticated and authorized. */
  get enabled(): boolean {
    return this.authenticator !== undefined;
  }

  /** The user a request acts as (401 for a bad token, 403 for impersonation the caller may not do). */
  identify(req: IncomingMessage): UserInfo {
    if (!this.authenticator) return ADMIN_USER;
    const requester = this.authenticator.authenticate(req.headers.authorization);
    return actingUser(requester, req.headersDistinct, this.authorize);
  }

  /** Throws the API server's 403 unless `user` may do `target`. */
  check(user: UserInfo, target: RequestTarget): void {
    const attributes: AuthorizationAttributes = target.resource
      ? { user, verb: target.verb, resource: target.resource }
      : { user, verb: target.verb, path: target.path };
    const decision = this.authorize(attributes);
    if (decision.decision !== 'allow') throw forbidden(target, user.username, decision.reason);
  }
}
