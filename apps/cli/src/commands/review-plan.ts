// `rolepolicy review --plan NAME -n NAMESPACE`: reads a PostgresPolicyPlan and the review ConfigMap its
// `rolepolicy.io/review-configmap` annotation names through a kubeconfig, and prints the stored artifact
// with the same renderers as `review -f` (they read only the artifact). Nothing is recomputed.
import { gunzipSync } from 'node:zlib';

import { ApiException, CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import {
  GROUP,
  KIND_NAMES,
  REVIEW_CONFIGMAP_ANNOTATION,
  REVIEW_GZIP_KEY,
  REVIEW_JSON_KEY,
  VERSION,
} from '@rolepolicy/kube';
import { validateReviewArtifact, type ReviewArtifact } from '@rolepolicy/review';

import { CliError, EXIT, type CliIo } from '../io.js';
import { printArtifact, type ReviewFormat } from './print-artifact.js';

/** Options of `review --plan`. */
export interface ReviewPlanOptions {
  readonly plan: string;
  readonly namespace: string;
  /** Kubeconfig file; default: $KUBECONFIG, in-cluster, or ~/.kube/config. */
  readonly kubeconfig?: string;
  readonly format?: ReviewFormat;
}

interface KubeObject {
  readonly metadata?: {
    readonly uid?: string;
    readonly annotations?: Record<string, string>;
    readonly ownerReferences?: readonly { readonly uid: string }[];
  };
}

/** The API's answer as a short reason (status code and reason phrase only, never request details). */
function apiReason(error: unknown): { code: number | null; text: string } {
  if (error instanceof ApiException) {
    const body = (typeof error.body === 'string' ? safeJson(error.body) : error.body) as {
      message?: unknown;
    } | null;
    const message = typeof body?.message === 'string' ? body.message : `HTTP ${error.code}`;
    return { code: error.code, text: message };
  }
  const text = error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error);
  return { code: null, text };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function loadKubeConfig(path: string | undefined): KubeConfig {
  const kc = new KubeConfig();
  try {
    if (path !== undefined) kc.loadFromFile(path);
    else kc.loadFromDefault();
  } catch (error) {
    const text = error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error);
    throw new CliError(`--kubeconfig: cannot load ${path ?? 'the default kubeconfig'}: ${text}`);
  }
  return kc;
}

/** The two API clients the artifact is read with (the plugin passes its impersonating ones). */
export interface ArtifactReaders {
  readonly custom: CustomObjectsApi;
  readonly core: CoreV1Api;
}

/** Reads and checks the stored artifact of a plan; every failure names the plan. */
export async function readPlanArtifact(
  apis: ArtifactReaders,
  namespace: string,
  name: string,
): Promise<ReviewArtifact> {
  const where = `plan "${namespace}/${name}"`;
  let plan: KubeObject;
  try {
    plan = (await apis.custom.getNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      plural: KIND_NAMES.PostgresPolicyPlan.plural,
      namespace,
      name,
    })) as KubeObject;
  } catch (error) {
    const reason = apiReason(error);
    if (reason.code === 404) throw new CliError(`${where} not found`);
    throw new CliError(`${where}: cannot read it: ${reason.text}`);
  }
  const configMapName = plan.metadata?.annotations?.[REVIEW_CONFIGMAP_ANNOTATION];
  if (configMapName === undefined || configMapName === '') {
    throw new CliError(
      `${where} has no review artifact (no ${REVIEW_CONFIGMAP_ANNOTATION} annotation: the plan predates review recording or its artifact was too large to store)`,
    );
  }
  let configMap: KubeObject & { data?: Record<string, string>; binaryData?: Record<string, string> };
  try {
    configMap = await apis.core.readNamespacedConfigMap({ namespace, name: configMapName });
  } catch (error) {
    const reason = apiReason(error);
    if (reason.code === 404) {
      throw new CliError(
        `${where}: its review artifact (ConfigMap "${configMapName}") is missing; the planner writes it right after the plan`,
      );
    }
    throw new CliError(`${where}: cannot read ConfigMap "${configMapName}": ${reason.text}`);
  }
  const owners = configMap.metadata?.ownerReferences ?? [];
  if (owners.length > 0 && !owners.some((o) => o.uid === plan.metadata?.uid)) {
    throw new CliError(`${where}: ConfigMap "${configMapName}" belongs to another object, not this plan`);
  }
  const json = configMap.data?.[REVIEW_JSON_KEY];
  const gzip = configMap.binaryData?.[REVIEW_GZIP_KEY];
  let text: string;
  try {
    text = json ?? (gzip !== undefined ? gunzipSync(Buffer.from(gzip, 'base64')).toString('utf8') : '');
  } catch {
    throw new CliError(`${where}: ConfigMap "${configMapName}" holds a corrupt ${REVIEW_GZIP_KEY}`);
  }
  if (text === '') {
    throw new CliError(
      `${where}: ConfigMap "${configMapName}" has neither ${REVIEW_JSON_KEY} nor ${REVIEW_GZIP_KEY}`,
    );
  }
  const validated = validateReviewArtifact(safeJson(text));
  if (!validated.ok) {
    throw new CliError(
      `${where}: ConfigMap "${configMapName}" does not hold a valid review artifact v2: ${validated.errors.slice(0, 3).join('; ')}`,
    );
  }
  return validated.artifact;
}

/** Runs `review --plan`; returns the exit code (0 when the artifact was printed). */
export async function reviewPlanCommand(options: ReviewPlanOptions, io: CliIo): Promise<number> {
  const kc = loadKubeConfig(options.kubeconfig);
  const apis = { custom: kc.makeApiClient(CustomObjectsApi), core: kc.makeApiClient(CoreV1Api) };
  const artifact = await readPlanArtifact(apis, options.namespace, options.plan);
  printArtifact(artifact, options.format, io);
  return EXIT.ok;
}
