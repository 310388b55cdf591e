// One notification delivery: the sink as its ConfigMap says now, its URL and signing keys read from their Secrets
// at this moment (sealed through the gateway, kept only for this call), the body, its signatures, one POST.
// Errors name the sink's namespace, Secrets and keys, never a URL or a key.
import {
  NOTIFICATIONS_CONFIGMAP,
  SIGNATURE_HEADER,
  describeSinkProblems,
  notificationBody,
  signatureHeader,
} from '@rolepolicy/policy';
import { PermanentDeliveryError, type DeliveryJob } from '../scheduler/queues.js';
import { sinkOf, type PublishedConfigMap } from './sinks.js';

/** Reads Secret values at the moment of use (the scheduler's SecretAccessClient). */
export interface SinkSecretReader {
  read(
    namespace: string,
    names: readonly string[],
  ): Promise<{ readonly secrets: ReadonlyMap<string, { readonly data: Readonly<Record<string, string>> }> }>;
}

/** What a delivery needs. */
export interface DeliveryDeps {
  readonly configMap: (namespace: string, name: string) => PublishedConfigMap | undefined;
  readonly secrets: SinkSecretReader;
  readonly timeoutMs: number;
  /** Default: the global fetch. */
  readonly fetch?: typeof fetch;
}

/** Thrown when the sink's configuration or Secrets are not there yet: retried (someone may fix them). */
export class SinkNotReadyError extends Error {
  override readonly name = 'SinkNotReadyError';
}

function value(
  secrets: ReadonlyMap<string, { readonly data: Readonly<Record<string, string>> }>,
  namespace: string,
  name: string,
  key: string,
): Buffer {
  const data = secrets.get(name)?.data;
  if (data === undefined)
    throw new SinkNotReadyError(`Secret ${namespace}/${name} of the notification sink is missing`);
  const encoded = data[key];
  if (encoded === undefined || encoded === '')
    throw new SinkNotReadyError(`Secret ${namespace}/${name} has no value at key ${key} (notification sink)`);
  return Buffer.from(encoded, 'base64');
}

/** Why a fetch failed, without its message (undici's can carry the address): the cause's code or name. */
function transportFailure(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; name?: unknown } }).cause;
  if ((error as Error).name === 'TimeoutError' || (error as Error).name === 'AbortError') return 'timed out';
  const code =
    typeof cause?.code === 'string' ? cause.code : typeof cause?.name === 'string' ? cause.name : 'error';
  return `connection failed (${code})`;
}

/** Sends `job` to its sink; throws to retry, PermanentDeliveryError when no retry can succeed. */
export async function deliver(job: DeliveryJob, deps: DeliveryDeps): Promise<void> {
  const ns = job.sinkNamespace;
  const where = `notification sink ${ns}/${NOTIFICATIONS_CONFIGMAP}`;
  const configMap = deps.configMap(ns, NOTIFICATIONS_CONFIGMAP);
  if (configMap === undefined) throw new PermanentDeliveryError(`${where} no longer exists`);
  const parsed = sinkOf(configMap);
  if (!parsed.ok)
    throw new SinkNotReadyError(`${where} is invalid: ${describeSinkProblems(parsed.problems)}`);
  const { sink } = parsed;
  const names = [sink.url.secretName, ...(sink.signing ? [sink.signing.secretName] : [])];
  const { secrets } = await deps.secrets.read(ns, names);
  let url: URL;
  try {
    url = new URL(value(secrets, ns, sink.url.secretName, sink.url.key).toString('utf8').trim());
  } catch (error) {
    if (error instanceof SinkNotReadyError) throw error;
    throw new PermanentDeliveryError(
      `${where}: Secret ${ns}/${sink.url.secretName} key ${sink.url.key} is not a URL`,
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new PermanentDeliveryError(
      `${where}: the URL in Secret ${ns}/${sink.url.secretName} must be http or https`,
    );
  const keys = sink.signing
    ? sink.signing.keys.flatMap((key) => {
        const data = secrets.get(sink.signing!.secretName)?.data[key];
        return data === undefined || data === '' ? [] : [Buffer.from(data, 'base64')];
      })
    : [];
  if (sink.signing && keys.length === 0)
    throw new SinkNotReadyError(
      `${where}: Secret ${ns}/${sink.signing.secretName} has none of the keys ${sink.signing.keys.join(', ')}`,
    );
  const { body, contentType } = notificationBody(job.occurrence, sink.format);
  const headers: Record<string, string> = {
    'content-type': contentType,
    'user-agent': 'rolepolicy-access-scheduler',
    ...(keys.length > 0 ? { [SIGNATURE_HEADER.toLowerCase()]: signatureHeader(body, keys) } : {}),
  };
  let status: number;
  try {
    const response = await (deps.fetch ?? fetch)(url, {
      method: 'POST',
      headers,
      body,
      redirect: 'error',
      signal: AbortSignal.timeout(deps.timeoutMs),
    });
    await response.arrayBuffer().catch(() => undefined);
    status = response.status;
  } catch (error) {
    // No cause attached on purpose: the fetch error can name the sink's address, which the logs must not show.
    // eslint-disable-next-line preserve-caught-error
    throw new Error(`${where}: POST ${transportFailure(error)}`);
  }
  if (status >= 200 && status < 300) return;
  const message = `${where}: POST answered HTTP ${status}`;
  if (status >= 400 && status < 500 && status !== 408 && status !== 429)
    throw new PermanentDeliveryError(message);
  throw new Error(message);
}
