// Authentication as kube-apiserver does it with --token-auth-file: a bearer token maps to a user (name,
// uid, groups) who also gets `system:authenticated`; ServiceAccount tokens carry the identity
// `system:serviceaccount:<ns>:<name>` with the groups `system:serviceaccounts` and
// `system:serviceaccounts:<ns>`; no token is `system:anonymous` (unless anonymous auth is off) and an
// unknown token is 401 Unauthorized.
import { randomBytes } from 'node:crypto';
import type { UserInfo } from '@rolepolicy/kube';
import { ApiError } from '../errors.js';

/** One static token: what kube-apiserver's token file holds on one line. */
export type TokenUser = {
  readonly token: string;
  readonly username: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
};

/** The identity the admin kubeconfig carries: a member of `system:masters`, which RBAC never checks. */
export const ADMIN_USER: UserInfo = {
  username: 'kubernetes-admin',
  groups: ['system:masters', 'system:authenticated'],
};

/** The identity of requests without credentials. */
export const ANONYMOUS_USER: UserInfo = {
  username: 'system:anonymous',
  groups: ['system:unauthenticated'],
};

const SA_PREFIX = 'system:serviceaccount:';

/** `{namespace, name}` of a ServiceAccount username, or undefined for any other user. */
export function serviceAccountOf(username: string): { namespace: string; name: string } | undefined {
  if (!username.startsWith(SA_PREFIX)) return undefined;
  const [namespace, name, ...rest] = username.slice(SA_PREFIX.length).split(':');
  if (!namespace || !name || rest.length > 0) return undefined;
  return { namespace, name };
}

/** The full identity of a username: a ServiceAccount's groups, plus `system:authenticated`. */
export function userInfoOf(username: string, groups: readonly string[] = [], uid?: string): UserInfo {
  const sa = serviceAccountOf(username);
  const all = [
    ...groups,
    ...(sa ? ['system:serviceaccounts', `system:serviceaccounts:${sa.namespace}`] : []),
    ...(username === ANONYMOUS_USER.username ? [] : ['system:authenticated']),
  ];
  return { username, ...(uid !== undefined ? { uid } : {}), groups: [...new Set(all)] };
}

/**
 * Parses a kube-apiserver static token file: `token,user,uid,"group1,group2"` per line (groups optional,
 * quoted when more than one); blank lines and `#` comments are skipped.
 */
export function parseTokenFile(text: string): TokenUser[] {
  const users: TokenUser[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const fields = csvFields(line);
    const [token, username, uid, groups] = fields;
    if (!token || !username || uid === undefined)
      throw new Error(`token file line ${i + 1}: expected token,user,uid[,"group1,group2"]`);
    users.push({
      token,
      username,
      ...(uid !== '' ? { uid } : {}),
      groups: (groups ?? '')
        .split(',')
        .map((g) => g.trim())
        .filter((g) => g !== ''),
    });
  });
  return users;
}

function csvFields(line: string): string[] {
  const out: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      out.push(field);
      field = '';
    } else field += c;
  }
  out.push(field);
  return out;
}

/** 401 as the API server answers a request whose credentials it does not accept. */
export function unauthorized(): ApiError {
  return new ApiError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'Unauthorized',
    reason: 'Unauthorized',
    code: 401,
  });
}

/** The token table: static users, the admin, and tokens minted for users and ServiceAccounts. */
export class Authenticator {
  private readonly byToken = new Map<string, UserInfo>();
  private readonly byUser = new Map<string, string>();
  /** The admin kubeconfig's token. */
  readonly adminToken: string;

  constructor(
    tokens: readonly TokenUser[],
    private readonly anonymous: boolean,
  ) {
    this.adminToken = `admin-${randomBytes(16).toString('hex')}`;
    this.byToken.set(this.adminToken, ADMIN_USER);
    this.byUser.set(ADMIN_USER.username, this.adminToken);
    for (const t of tokens) this.add(t.token, userInfoOf(t.username, t.groups ?? [], t.uid));
  }

  private add(token: string, user: UserInfo): void {
    if (this.byToken.has(token)) throw new Error(`authentication: token of ${user.username} is not unique`);
    this.byToken.set(token, user);
    if (!this.byUser.has(user.username)) this.byUser.set(user.username, token);
  }

  /**
   * A token for `username`: its static token when the table has one, else a new one for that user
   * (with `groups`; a ServiceAccount username gets the ServiceAccount groups).
   */
  tokenFor(username: string, groups: readonly string[] = []): string {
    const known = this.byUser.get(username);
    if (known !== undefined) return known;
    const token = `${serviceAccountOf(username) ? 'sa' : 'user'}-${randomBytes(16).toString('hex')}`;
    this.add(token, userInfoOf(username, groups));
    return token;
  }

  /** The caller of a request with this Authorization header value. */
  authenticate(authorization: string | undefined): UserInfo {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (!match) {
      if (authorization === undefined && this.anonymous) return ANONYMOUS_USER;
      throw unauthorized();
    }
    const user = this.byToken.get(match[1]!);
    if (!user) throw unauthorized();
    return user;
  }
}
