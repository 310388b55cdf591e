// Entry point of the Kubernetes API emulator: starts the HTTP server, installs the CRDs from a
// directory and hands out kubeconfigs for client-node and kubectl. Test and demo use only.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
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
};

/** A running emulator. */
export type Emulator = {
  /** Base URL, e.g. `http://127.0.0.1:40123`. */
  readonly url: string;
  /** Path of a kubeconfig file pointing at the emulator (context `emulator`, namespace `default`). */
  readonly kubeconfigPath: string;
  /** A fresh client-node KubeConfig pointing at the emulator, optionally with another default namespace. */
  kubeConfig(namespace?: string): KubeConfig;
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

function kubeconfigYaml(url: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: emulator',
    '  cluster:',
    `    server: ${url}`,
    // client-node refuses plain http unless TLS verification is explicitly off.
    '    insecure-skip-tls-verify: true',
    'users:',
    '- name: emulator',
    '  user:',
    '    token: emulator',
    'contexts:',
    '- name: emulator',
    '  context:',
    '    cluster: emulator',
    '    user: emulator',
    '    namespace: default',
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
  if (options.crdDir) {
    const crdType = registry.typeFor('apiextensions.k8s.io', 'v1', 'customresourcedefinitions')!;
    for (const crd of await readCrdManifests(options.crdDir))
      await registry.create(crdType, undefined, crd, {});
  }
  const server = new EmulatorServer(registry, {
    bookmarkIntervalMs: options.bookmarkIntervalMs ?? 1000,
    log: options.log,
  });
  const url = await server.listen(options.port ?? 0);
  const dir = await mkdtemp(join(tmpdir(), 'rp-emulator-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  await writeFile(kubeconfigPath, kubeconfigYaml(url), { mode: 0o600 });
  return {
    url,
    kubeconfigPath,
    kubeConfig(namespace = 'default') {
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'emulator', server: url, skipTLSVerify: true }],
        users: [{ name: 'emulator', token: 'emulator' }],
        contexts: [{ name: 'emulator', cluster: 'emulator', user: 'emulator', namespace }],
        currentContext: 'emulator',
      });
      return kc;
    },
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
