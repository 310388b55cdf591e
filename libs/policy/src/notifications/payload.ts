// The bytes a sink receives for an occurrence: a CloudEvents 1.0 structured JSON event, or a Slack incoming-
// webhook message; and the signature header over those exact bytes. Pure (HMAC is computation, keys passed in).
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Occurrence } from './occurrences.js';
import type { SinkFormat } from './sink-config.js';

/** Content type of a structured CloudEvent. */
export const CLOUDEVENTS_CONTENT_TYPE = 'application/cloudevents+json; charset=utf-8';
/** Prefix of every CloudEvents `type` rolepolicy sends. */
export const CLOUDEVENT_TYPE_PREFIX = 'io.rolepolicy.';
/** The header carrying one `v1=<hex>` HMAC-SHA256 per active signing key, comma-separated. */
export const SIGNATURE_HEADER = 'X-Rolepolicy-Signature';

const PLURALS: Readonly<Record<Occurrence['kind'], string>> = {
  PostgresPolicyPlan: 'postgrespolicyplans',
  EphemeralAccessRequest: 'ephemeralaccessrequests',
};

/** A request body with its content type. */
export interface NotificationBody {
  readonly contentType: string;
  readonly body: string;
}

/**
 * The CloudEvents 1.0 structured form of an occurrence. `source` is the namespace (a URI reference), `subject`
 * the object, `id` the occurrence's deterministic id (unique per source; receivers deduplicate by it).
 */
export function cloudEvent(occurrence: Occurrence): Record<string, unknown> {
  return {
    specversion: '1.0',
    id: occurrence.id,
    source: `/rolepolicy.io/namespaces/${occurrence.namespace}`,
    type: `${CLOUDEVENT_TYPE_PREFIX}${occurrence.type}`,
    subject: `${PLURALS[occurrence.kind]}/${occurrence.name}`,
    time: occurrence.time,
    datacontenttype: 'application/json',
    data: {
      ...occurrence.data,
      namespace: occurrence.namespace,
      uid: occurrence.uid,
      title: occurrence.title,
    },
  };
}

function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Lines of detail for a Slack message, from the occurrence's data (strings and numbers, commands as code). */
function details(occurrence: Occurrence): string[] {
  const d = occurrence.data;
  const lines: string[] = [];
  const line = (label: string, value: unknown): void => {
    if (value === null || value === undefined || value === '') return;
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    lines.push(`*${label}:* ${escapeMrkdwn(text)}`);
  };
  line('Policy', d['policy']);
  line('Changes', d['changeSummary']);
  if (Array.isArray(d['warnings']) && d['warnings'].length > 0) line('Warnings', d['warnings'].join('; '));
  line('Review ConfigMap', d['reviewConfigMap']);
  line('Requested by', (d['requestedBy'] as { username?: string } | null)?.username);
  line('Justification', d['justification']);
  line('Access policy', d['accessPolicy']);
  const bundle = d['bundle'] as { memberships?: readonly { role: string }[] } | null;
  if (bundle?.memberships) line('Roles', bundle.memberships.map((m) => m.role).join(', '));
  line('Duration', d['duration']);
  if (occurrence.type === 'access.pending-approval') line('Approve before', d['approvalExpiresAt']);
  line('Decided by', (d['decidedBy'] as { username?: string } | null)?.username);
  line('Error', d['lastError']);
  const approve = d['approve'] as { kubectl?: string; plugin?: string } | undefined;
  if (approve?.plugin) lines.push(`*Approve:* \`${approve.plugin}\``);
  if (approve?.kubectl) lines.push(`\`\`\`${approve.kubectl}\`\`\``);
  return lines;
}

/** A Slack incoming-webhook message (`text` for notifications, `blocks` for the channel). */
export function slackMessage(occurrence: Occurrence): Record<string, unknown> {
  const title = escapeMrkdwn(occurrence.title);
  return {
    text: occurrence.title,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: [`*${title}*`, ...details(occurrence)].join('\n') } },
      {
        type: 'context',
        elements: [
          {
            type: 'mrkdwn',
            text: `${CLOUDEVENT_TYPE_PREFIX}${occurrence.type} · ${occurrence.id} · ${occurrence.time}`,
          },
        ],
      },
    ],
  };
}

/** The body a sink of `format` receives for `occurrence`. */
export function notificationBody(occurrence: Occurrence, format: SinkFormat): NotificationBody {
  switch (format) {
    case 'cloudevents':
      return { contentType: CLOUDEVENTS_CONTENT_TYPE, body: JSON.stringify(cloudEvent(occurrence)) };
    case 'slack':
      return {
        contentType: 'application/json; charset=utf-8',
        body: JSON.stringify(slackMessage(occurrence)),
      };
    default: {
      const never: never = format;
      return never;
    }
  }
}

/**
 * The signature header value: `v1=<hex>` per key (HMAC-SHA256 of the exact body bytes), comma-separated, so a
 * receiver holding any one of the active keys verifies while keys rotate.
 * @example signatureHeader('{"id":"rp-1"}', [Buffer.from('k1')]) // 'v1=5d1f…'
 */
export function signatureHeader(body: string, keys: readonly Uint8Array[]): string {
  return keys.map((key) => `v1=${createHmac('sha256', key).update(body, 'utf8').digest('hex')}`).join(',');
}

/** True when one of the header's `v1` signatures is the body's HMAC-SHA256 under `key` (constant time). */
export function verifySignature(body: string, header: string, key: Uint8Array): boolean {
  const expected = createHmac('sha256', key).update(body, 'utf8').digest();
  return header.split(',').some((part) => {
    const [scheme, hex] = part.trim().split('=', 2);
    if (scheme !== 'v1' || hex === undefined || !/^[0-9a-f]{64}$/.test(hex)) return false;
    return timingSafeEqual(Buffer.from(hex, 'hex'), expected);
  });
}

/**
 * The delays between a delivery's attempts under exponential backoff (`baseMs`, doubling), and their sum: how
 * long a receiver may be away before the delivery is dead-lettered.
 */
export function retryWindow(attempts: number, baseMs: number): { delaysMs: number[]; totalMs: number } {
  const delaysMs = Array.from({ length: Math.max(0, attempts - 1) }, (_, i) => baseMs * 2 ** i);
  return { delaysMs, totalMs: delaysMs.reduce((a, b) => a + b, 0) };
}
