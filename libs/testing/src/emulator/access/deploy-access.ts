// What installing deploy/base gives the services on a real cluster, reproduced in an emulator with
// authentication on: the ServiceAccounts (deploy/base/service-accounts.yaml), the gateway's RBAC
// (deploy/base/rbac.yaml) and the admission policies (deploy/base/admission.yaml with its parameter
// deploy/admission/params.yaml, plus any extra policy files, e.g. deploy/admission/decisions.yaml), each
// service then talking to the API as its own ServiceAccount.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KubernetesObjectApi, type KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import type { Emulator } from '../start.js';

/** The namespace kustomize installs deploy/base into (its ServiceAccounts' namespace). */
export const INSTALL_NAMESPACE = 'rolepolicy-system';

/** Options of {@link installDeployAccess}. */
export type DeployAccessOptions = {
  /** The repository's deploy/base directory. */
  readonly baseDir: string;
  /**
   * Namespace of the namespaced RBAC objects (the gateway's leader-election Role and RoleBinding): the
   * gateway's LEASE_NAMESPACE (kustomize puts them in `rolepolicy-system`, where the gateway runs).
   */
  readonly leaseNamespace: string;
  /** More manifests to install after the base's (admission policies, ClusterRoles). */
  readonly extraFiles?: readonly string[];
};

/** Kinds kustomize's `namespace:` leaves alone. */
const CLUSTER_SCOPED = new Set([
  'ClusterRole',
  'ClusterRoleBinding',
  'Namespace',
  'CustomResourceDefinition',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
  'MutatingAdmissionPolicy',
  'MutatingAdmissionPolicyBinding',
]);

async function manifests(file: string): Promise<KubernetesObject[]> {
  const docs = parseAllDocuments(await readFile(file, 'utf8'));
  return docs
    .map((d) => d.toJS() as KubernetesObject | null)
    .filter((o): o is KubernetesObject => o !== null);
}

/** The username of a service's ServiceAccount, e.g. `system:serviceaccount:rolepolicy-system:rolepolicy-planner`. */
export function serviceAccountUser(service: string): string {
  return `system:serviceaccount:${INSTALL_NAMESPACE}:rolepolicy-${service}`;
}

/**
 * Installs the ServiceAccounts, RBAC and admission policies of deploy/base (as the admin) and returns a
 * kubeconfig per service in `services` that authenticates as `rolepolicy-<service>`.
 */
export async function installDeployAccess(
  emu: Emulator,
  services: readonly string[],
  options: DeployAccessOptions,
): Promise<Record<string, string>> {
  const client = KubernetesObjectApi.makeApiClient(emu.kubeConfig());
  const files = [
    ['service-accounts.yaml', INSTALL_NAMESPACE],
    ['rbac.yaml', options.leaseNamespace],
    ['admission.yaml', INSTALL_NAMESPACE],
    // The parameter both admission policies read (deploy/admission, part of the base; ADR 0026): the
    // gateway's ConfigMap policy knows the gateway by it, and narrows nothing without it.
    ['../admission/params.yaml', INSTALL_NAMESPACE],
  ] as const;
  const install = async (file: string, namespace: string) => {
    for (const object of await manifests(file)) {
      const namespaced = !CLUSTER_SCOPED.has(object.kind ?? '');
      await client.create({
        ...object,
        metadata: {
          ...object.metadata,
          ...(namespaced ? { namespace: object.metadata?.namespace ?? namespace } : {}),
        },
      });
    }
  };
  for (const [file, namespace] of files) await install(join(options.baseDir, file), namespace);
  for (const file of options.extraFiles ?? []) await install(file, INSTALL_NAMESPACE);
  const kubeconfigs: Record<string, string> = {};
  for (const service of services) kubeconfigs[service] = await emu.kubeconfigFor(serviceAccountUser(service));
  return kubeconfigs;
}
