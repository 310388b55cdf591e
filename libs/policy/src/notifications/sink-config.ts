// The notification sink a ConfigMap named `rolepolicy-notifications` configures (per namespace, or cluster-wide
// in the operator's namespace): parsed and validated once here; values are names and references, never secrets.

/** Name of the ConfigMap that configures a namespace's (or, in the operator's namespace, the cluster's) sink. */
export const NOTIFICATIONS_CONFIGMAP = 'rolepolicy-notifications';

/** Payload formats of a sink. */
export const SINK_FORMATS = ['cloudevents', 'slack'] as const;
/** A sink's payload format. */
export type SinkFormat = (typeof SINK_FORMATS)[number];

/**
 * The settings a notifications ConfigMap may hold (its `data` keys). The gateway publishes the values of these
 * keys only; any other key travels as a name (and is reported as unknown).
 */
export const SINK_SETTINGS = [
  'format',
  'urlSecretName',
  'urlSecretKey',
  'signingSecretName',
  'signingKeys',
  'types',
] as const;
/** One setting's name. */
export type SinkSetting = (typeof SINK_SETTINGS)[number];

/** Every occurrence a sink can be told about (CloudEvents type `io.rolepolicy.<type>`). */
export const NOTIFICATION_TYPES = [
  'plan.pending-approval',
  'plan.decision-recorded',
  'plan.applied',
  'plan.failed',
  'access.pending-approval',
  'access.decision-recorded',
  'access.active',
  'access.ended',
  'access.revoked',
  'access.failed',
  'access.approval-expired',
] as const;
/** One occurrence type. */
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

/** A validated sink. Secret names and keys only: the URL and the signing keys are read when a delivery runs. */
export interface SinkConfig {
  readonly format: SinkFormat;
  readonly url: { readonly secretName: string; readonly key: string };
  /** Where the signing keys are, one signature per key present; absent only for a `slack` sink. */
  readonly signing: { readonly secretName: string; readonly keys: readonly string[] } | null;
  /** The occurrences this sink wants (all of them unless `types` narrows it). */
  readonly types: ReadonlySet<NotificationType>;
}

/** A problem with one setting: the field and the rule, never the value. */
export interface SinkConfigProblem {
  readonly field: string;
  readonly message: string;
}

/** The parse of a notifications ConfigMap. */
export type SinkConfigParse =
  | { readonly ok: true; readonly sink: SinkConfig }
  | { readonly ok: false; readonly problems: readonly SinkConfigProblem[] };

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const SECRET_KEY = /^[-._a-zA-Z0-9]+$/;
const DEFAULT_URL_KEY = 'url';
const DEFAULT_SIGNING_KEY = 'signing-key';
const MAX_SIGNING_KEYS = 4;

function list(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/**
 * Validates a notifications ConfigMap's `data` (the published settings plus the names of every key it has).
 * Problems name `data.<key>` and the rule; the values themselves are never repeated (a ConfigMap is not the
 * place for a secret, but someone may have put one there).
 *
 * @example
 * parseSinkConfig({ urlSecretName: 'hooks', signingSecretName: 'hooks' }, ['urlSecretName', 'signingSecretName'])
 * // { ok: true, sink: { format: 'cloudevents', url: { secretName: 'hooks', key: 'url' }, … } }
 */
export function parseSinkConfig(
  settings: Readonly<Record<string, string>>,
  keys: readonly string[] = Object.keys(settings),
): SinkConfigParse {
  const problems: SinkConfigProblem[] = [];
  const problem = (field: string, message: string): void => {
    problems.push({ field: `data.${field}`, message });
  };
  for (const key of keys)
    if (!(SINK_SETTINGS as readonly string[]).includes(key))
      problem(key, `unknown setting (known: ${SINK_SETTINGS.join(', ')})`);
  const get = (key: SinkSetting): string | undefined => {
    const value = settings[key];
    return value === undefined ? undefined : value.trim();
  };

  const formatText = get('format') ?? 'cloudevents';
  const format = (SINK_FORMATS as readonly string[]).includes(formatText)
    ? (formatText as SinkFormat)
    : undefined;
  if (format === undefined) problem('format', `must be one of ${SINK_FORMATS.join(', ')}`);

  const secretName = (key: 'urlSecretName' | 'signingSecretName', required: boolean): string | null => {
    const value = get(key);
    if (value === undefined || value === '') {
      if (required) problem(key, 'is required: the name of a Secret in the same namespace');
      return null;
    }
    if (value.length > 253 || !DNS_SUBDOMAIN.test(value))
      problem(
        key,
        'must be a Secret name (a DNS subdomain: lowercase letters, digits, - and ., at most 253)',
      );
    return value;
  };
  const secretKey = (field: string, value: string): void => {
    if (value.length > 253 || !SECRET_KEY.test(value))
      problem(field, 'must name Secret keys (letters, digits, -, _ and ., at most 253 each)');
  };

  const urlSecret = secretName('urlSecretName', true);
  const urlKey = get('urlSecretKey') || DEFAULT_URL_KEY;
  secretKey('urlSecretKey', urlKey);

  // CloudEvents receivers verify every delivery, so that format is never sent unsigned; Slack does not verify.
  const signingSecret = secretName('signingSecretName', format === 'cloudevents');
  const signingKeys = list(get('signingKeys') ?? DEFAULT_SIGNING_KEY);
  if (signingKeys.length === 0) problem('signingKeys', 'must list at least one key of the signing Secret');
  if (signingKeys.length > MAX_SIGNING_KEYS)
    problem('signingKeys', `may list at most ${MAX_SIGNING_KEYS} keys (one per signature)`);
  for (const key of signingKeys) secretKey('signingKeys', key);
  if (signingSecret === null && settings['signingKeys'] !== undefined)
    problem('signingKeys', 'needs signingSecretName');

  const typesText = get('types');
  const types = new Set<NotificationType>();
  if (typesText === undefined || typesText === '') NOTIFICATION_TYPES.forEach((t) => types.add(t));
  else {
    const unknown = list(typesText).filter((t) => !(NOTIFICATION_TYPES as readonly string[]).includes(t));
    if (unknown.length > 0)
      problem('types', `lists unknown types; each must be one of ${NOTIFICATION_TYPES.join(', ')}`);
    else list(typesText).forEach((t) => types.add(t as NotificationType));
  }

  const unique = new Map(problems.map((p) => [`${p.field}\n${p.message}`, p]));
  if (unique.size > 0 || format === undefined || urlSecret === null)
    return { ok: false, problems: [...unique.values()] };
  return {
    ok: true,
    sink: {
      format,
      url: { secretName: urlSecret, key: urlKey },
      signing: signingSecret === null ? null : { secretName: signingSecret, keys: [...new Set(signingKeys)] },
      types,
    },
  };
}

/** The published settings of a ConfigMap's data: only the known keys' values (the gateway's filter). */
export function publishedSinkSettings(data: Readonly<Record<string, unknown>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of SINK_SETTINGS) {
    const value = data[key];
    if (typeof value === 'string') out[key] = value;
  }
  return out;
}

/**
 * The Secrets a notifications ConfigMap names, with the keys it reads (for the gateway's read rule): names and
 * keys only. Settings that do not validate name nothing.
 */
export function sinkSecretReferences(
  settings: Readonly<Record<string, string>>,
): ReadonlyMap<string, ReadonlySet<string>> {
  const parsed = parseSinkConfig(settings, Object.keys(publishedSinkSettings(settings)));
  const found = new Map<string, Set<string>>();
  if (!parsed.ok) return found;
  const add = (name: string, key: string): void => {
    found.set(name, new Set([...(found.get(name) ?? []), key]));
  };
  add(parsed.sink.url.secretName, parsed.sink.url.key);
  for (const key of parsed.sink.signing?.keys ?? []) add(parsed.sink.signing!.secretName, key);
  return found;
}

/** One line per problem, for a log line or an Event: `data.format: must be one of cloudevents, slack`. */
export function describeSinkProblems(problems: readonly SinkConfigProblem[]): string {
  return problems.map((p) => `${p.field}: ${p.message}`).join('; ');
}
