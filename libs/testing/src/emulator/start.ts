// Entry point of the Kubernetes API emulator: starts the HTTP server, installs the CRDs from a
// directory and hands out kubeconfigs for client-node and kubectl. Test and demo use only.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { AccessControl, type AuthenticationOptions } from './access/access-control.js';
import { ADMIN_USER } from './access/authn.js';
import { bootstrapRbac } from './access/bootstrap-roles.js';
import { escalationCheck } from './access/escalation.js';
import { mutatingPolicyAdmission, policyAdmission } from './access/policy-admission.js';
import { selfSignedCertificate } from './access/tls.js';
import { crdAdmission } from './crd-admission.js';
import { readCrdManifests } from './crd-files.js';
import { Registry } from './registry.js';
import { EmulatorServer, type RequestHook } from './server.js';
import type { AdmissionHook } from './types.js';

/** Options of {@link startEmulator}. */
export type EmulatorOptions = {
  /** TCP port on 127.0.0.1; 0 or absent picks a free one. */
  readonly port?: number;
  /** Directory of CRD manifests to install at start (e.g. `deploy/crds`). */
  readonly crdDir?: string;
  /**
   * Admission plug-in. Absent: custom resources go through the project's admission engine
   * (pruning, defaults, structural schema, CEL rules); `null`: everything is accepted as sent.
   */
  readonly admission?: AdmissionHook | null;
  /** Number of change events kept for watch resumption; older versions get 410 Gone. */
  readonly historyLimit?: number;
  /** Interval of BOOKMARK events on watches that allow them (default 1000 ms). */
  readonly bookmarkIntervalMs?: number;
  /** Request log sink, for debugging. */
  readonly log?: (line: string) => void;
  /**
   * Turns on authentication (bearer tokens) and RBAC authorization, as a real cluster has them; absent,
   * every request is the admin and everything is allowed. `{}` is enough: users get tokens from
   * {@link Emulator.kubeconfigFor}; `tokens` adds static ones (kube-apiserver's token file).
   */
  readonly authentication?: AuthenticationOptions;
};

/** Whom {@link Emulator.kubeconfigFor} authenticates: a username (ServiceAccounts as `system:serviceaccount:<ns>:<name>`). */
export type EmulatorUser = string | { readonly username: string; readonly groups?: readonly string[] };

/** A running emulator. */
export type Emulator = {
  /** Base URL, e.g. `http://127.0.0.1:40123`. */
  readonly url: string;
  /**
   * Path of a kubeconfig file pointing at the emulator (context `emulator`, namespace `default`); its
   * user is the admin (`kubernetes-admin` in `system:masters`), who may also impersonate (`kubectl --as`).
   */
  readonly kubeconfigPath: string;
  /** A fresh client-node KubeConfig pointing at the emulator as the admin, optionally with another default namespace. */
  kubeConfig(namespace?: string): KubeConfig;
  /** Whether authentication and RBAC are on (the URL is then https). */
  readonly authenticationEnabled: boolean;
  /** With authentication on: the PEM certificate the emulator serves (kubeconfigs trust it), for `fetch` and friends. */
  readonly caPem: string | undefined;
  /**
   * The bearer token of `user` (a static token when one is configured, else a new one; a ServiceAccount
   * username gets the ServiceAccount groups). With authentication off, any token is the admin.
   */
  tokenFor(user: EmulatorUser): string;
  /** Writes a kubeconfig that authenticates as `user` (removed by stop) and returns its path. */
  kubeconfigFor(user: EmulatorUser, namespace?: string): Promise<string>;
  /** A client-node KubeConfig that authenticates as `user`. */
  kubeConfigFor(user: EmulatorUser, namespace?: string): KubeConfig;
  /** Replaces the admission hook (`undefined` accepts everything as sent). */
  setAdmission(hook: AdmissionHook | undefined): void;
  /** Forgets the watch history: any watch resuming from an older resourceVersion gets 410 Gone. */
  compactHistory(): void;
  /** Changes how many events are kept for watch resumption. */
  setHistoryLimit(limit: number): void;
  /** Sets a hook awaited before each request (e.g. to force a concurrent write); undefined removes it. */
  setRequestHook(hook: RequestHook | undefined): void;
  /** Ends every open watch stream, as an API server restart would. */
  endWatches(): void;
  /** The newest resourceVersion. */
  resourceVersion(): number;
  /** Stops the server, ends watches and removes the kubeconfig. */
  stop(): Promise<void>;
};

function kubeconfigYaml(
  url: string,
  token: string,
  caData: string | undefined,
  namespace = 'default',
): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: emulator',
    '  cluster:',
    `    server: ${url}`,
    // client-node refuses plain http unless TLS verification is explicitly off; over TLS (authentication
    // on) clients verify the emulator's self-signed certificate.
    caData ? `    certificate-authority-data: ${caData}` : '    insecure-skip-tls-verify: true',
    'users:',
    '- name: emulator',
    '  user:',
    `    token: ${token}`,
    'contexts:',
    '- name: emulator',
    '  context:',
    '    cluster: emulator',
    '    user: emulator',
    `    namespace: ${namespace}`,
    'current-context: emulator',
    '',
  ].join('\n');
}

/**
 * Starts an in-process Kubernetes API emulator.
 * @example
 * const emu = await startEmulator({ crdDir: 'deploy/crds' });
 * const api = emu.kubeConfig().makeApiClient(CustomObjectsApi);
 * await emu.stop();
 */
export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const registry = new Registry({
    historyLimit: options.historyLimit ?? 10_000,
    admission: options.admission === undefined ? crdAdmission() : (options.admission ?? undefined),
  });
  const access = new AccessControl(registry.store, options.authentication);
  const policies = policyAdmission(registry, access.authorize);
  const escalation = access.enabled
    ? escalationCheck(access.rbac, access.authorize, (r) => r.options.user ?? ADMIN_USER)
    : undefined;
  registry.setValidating((request) => {
    escalation?.(request);
    policies(request);
  });
  registry.setMutating(mutatingPolicyAdmission(registry, access.authorize));
  if (access.enabled) {
    for (const object of bootstrapRbac()) {
      const [group, version] = object.apiVersion.split('/') as [string, string];
      const type = registry.typeFor(group, version, `${object.kind.toLowerCase()}s`)!;
      await registry.create(type, undefined, object, {});
    }
  }
  if (options.crdDir) {
    const crdType = registry.typeFor('apiextensions.k8s.io', 'v1', 'customresourcedefinitions')!;
    for (const crd of await readCrdManifests(options.crdDir))
      await registry.create(crdType, undefined, crd, {});
  }
  const dir = await mkdtemp(join(tmpdir(), 'rp-emulator-'));
  const tls = access.enabled ? await selfSignedCertificate(dir) : undefined;
  const server = new EmulatorServer(registry, access, {
    bookmarkIntervalMs: options.bookmarkIntervalMs ?? 1000,
    log: options.log,
    ...(tls ? { tls } : {}),
  });
  const url = await server.listen(options.port ?? 0);
  const caData = tls ? Buffer.from(tls.cert).toString('base64') : undefined;
  const kubeconfigPath = join(dir, 'kubeconfig');
  const authn = access.authenticator;
  const adminToken = authn?.adminToken ?? 'emulator';
  await writeFile(kubeconfigPath, kubeconfigYaml(url, adminToken, caData), { mode: 0o600 });
  const tokenFor = (user: EmulatorUser): string => {
    const { username, groups } = typeof user === 'string' ? { username: user, groups: [] } : user;
    return authn ? authn.tokenFor(username, groups) : 'emulator';
  };
  const clientConfig = (token: string, namespace: string): KubeConfig => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [
        caData
          ? { name: 'emulator', server: url, caData }
          : { name: 'emulator', server: url, skipTLSVerify: true },
      ],
      users: [{ name: 'emulator', token }],
      contexts: [{ name: 'emulator', cluster: 'emulator', user: 'emulator', namespace }],
      currentContext: 'emulator',
    });
    return kc;
  };
  let written = 0;
  return {
    url,
    kubeconfigPath,
    kubeConfig: (namespace = 'default') => clientConfig(adminToken, namespace),
    authenticationEnabled: access.enabled,
    caPem: tls?.cert,
    tokenFor,
    async kubeconfigFor(user, namespace = 'default') {
      const path = join(dir, `kubeconfig-${++written}`);
      await writeFile(path, kubeconfigYaml(url, tokenFor(user), caData, namespace), { mode: 0o600 });
      return path;
    },
    kubeConfigFor: (user, namespace = 'default') => clientConfig(tokenFor(user), namespace),
    setAdmission: (hook) => registry.setAdmission(hook),
    compactHistory: () => registry.store.compact(),
    setHistoryLimit: (limit) => registry.store.setHistoryLimit(limit),
    endWatches: () => server.endWatches(),
    setRequestHook: (hook) => server.setRequestHook(hook),
    resourceVersion: () => registry.store.currentRv(),
    async stop() {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
