// User impersonation as kube-apiserver's filter does it (what `kubectl --as`, `--as-group`, `--as-uid`
// send): each requested attribute needs the `impersonate` verb for the requester, on `users` (or on the
// `serviceaccounts` object for a ServiceAccount username), `groups`, `uids` and `userextras/<key>` in
// authentication.k8s.io; the request then runs as the impersonated user, who gets
// `system:authenticated` (and a ServiceAccount's groups) added as upstream.
import type { AuthorizationAttributes, Authorizer, UserInfo } from '@rolepolicy/kube';
import { badRequest, forbidden } from '../errors.js';
import { serviceAccountOf, userInfoOf } from './authn.js';

/** Header values as node gives them when a header may repeat. */
export type Headers = Readonly<Record<string, readonly string[] | undefined>>;

const EXTRA_PREFIX = 'impersonate-extra-';

/** The user a request acts as: the requester, or whom its Impersonate-* headers name (if allowed). */
export function actingUser(requester: UserInfo, headers: Headers, authorize: Authorizer): UserInfo {
  const username = headers['impersonate-user']?.[0];
  const groups = headers['impersonate-group'] ?? [];
  const uid = headers['impersonate-uid']?.[0];
  const extraKeys = Object.keys(headers).filter((h) => h.startsWith(EXTRA_PREFIX));
  if (username === undefined) {
    if (groups.length > 0 || uid !== undefined || extraKeys.length > 0)
      throw badRequest('requested impersonation of groups, uid or extra without impersonating a user');
    return requester;
  }
  const check = (resource: AuthorizationAttributes['resource'] & object) => {
    const attributes: AuthorizationAttributes = { user: requester, verb: 'impersonate', resource };
    if (authorize(attributes).decision !== 'allow')
      throw forbidden({ verb: 'impersonate', resource }, requester.username);
  };
  const sa = serviceAccountOf(username);
  if (sa) check({ group: '', resource: 'serviceaccounts', namespace: sa.namespace, name: sa.name });
  else check({ group: '', resource: 'users', name: username });
  for (const group of groups) check({ group: '', resource: 'groups', name: group });
  if (uid !== undefined) check({ group: 'authentication.k8s.io', resource: 'uids', name: uid });
  const extra: Record<string, string[]> = {};
  for (const header of extraKeys) {
    const key = decodeURIComponent(header.slice(EXTRA_PREFIX.length));
    for (const value of headers[header] ?? []) {
      check({ group: 'authentication.k8s.io', resource: 'userextras', subresource: key, name: value });
      (extra[key] ??= []).push(value);
    }
  }
  const explicit = groups.includes('system:authenticated') || groups.includes('system:unauthenticated');
  const user = explicit ? { username, groups: [...groups] } : userInfoOf(username, groups);
  return {
    ...user,
    ...(uid !== undefined ? { uid } : {}),
    ...(Object.keys(extra).length ? { extra } : {}),
  };
}
