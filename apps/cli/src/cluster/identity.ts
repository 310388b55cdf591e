// Who the caller is, as `kubectl auth whoami` asks it: a SelfSubjectReview (authentication.k8s.io/v1).
// An API that does not serve it (404) gets the kubeconfig's user name instead, said on stderr, because
// that name is only what the writer asserts.
import { ApiException } from '@kubernetes/client-node';
import type { Decider } from '@rolepolicy/kube';

import { CliError, type CliIo } from '../io.js';
import { describeApiError, type Cluster } from './kube-client.js';

/** The caller's identity and where it came from. */
export interface CallerIdentity extends Decider {
  /** `api`: the API authenticated it; `kubeconfig`: asserted from the kubeconfig (or --as). */
  readonly source: 'api' | 'kubeconfig';
}

/** Asks the API who the caller is (with --as/--as-group applied by the API), or falls back. */
export async function whoAmI(cluster: Cluster, io: CliIo): Promise<CallerIdentity> {
  try {
    const review = await cluster.authentication.createSelfSubjectReview({
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    });
    const user = review.status?.userInfo;
    if (user?.username) {
      return {
        username: user.username,
        ...(user.uid ? { uid: user.uid } : {}),
        groups: user.groups ?? [],
        source: 'api',
      };
    }
  } catch (error) {
    if (!(error instanceof ApiException && (error.code === 404 || error.code === 405))) {
      throw describeApiError('selfsubjectreview (who am I)', error);
    }
  }
  const { user, groups } = cluster.impersonation;
  const username = user ?? cluster.kubeConfig.getCurrentUser()?.name;
  if (!username) {
    throw new CliError('the API does not serve SelfSubjectReview and the kubeconfig names no user');
  }
  io.stderr(
    `rolepolicy: the API does not serve SelfSubjectReview (authentication.k8s.io/v1); using ${user !== undefined ? '--as' : "the kubeconfig's user name"} "${username}", which the API has not verified\n`,
  );
  return { username, groups: [...groups], source: 'kubeconfig' };
}
