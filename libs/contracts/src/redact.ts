// Strips secrets from free text before it reaches `last_error`, plan `lastError`, Events or logs:
// URL credentials, PASSWORD literals, conninfo passwords and SCRAM verifiers. Shared by every service
// (the planner's status messages, Kubernetes Event messages, the gateway's last check before writing).

/** What replaces a removed secret. */
export const REDACTED = '[REDACTED]';

/** Upper bound on stored error text (the request kind's documented `lastError` limit; reused for symmetry). */
export const MAX_ERROR_CHARS = 4096;

const URL_CREDENTIALS = /([a-z][a-z0-9+.-]*:\/\/)[^\s/@]*@/gi;
const PASSWORD_LITERAL = /(PASSWORD\s+)(E?'(?:[^']|'')*'?)/gi;
const CONNINFO_PASSWORD = /(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s]+)/gi;
const PASSWORD_PARAM = /([?&]password=)[^&\s]*/gi;
const SCRAM_VERIFIER = /SCRAM-SHA-256\$[^\s'"]+/g;

/**
 * Removes secrets from a message and bounds its length.
 * @example redactSecrets("postgres://app:hunter2@db/x") // "postgres://[REDACTED]@db/x"
 */
export function redactSecrets(message: string): string {
  const cleaned = message
    .replace(URL_CREDENTIALS, `$1${REDACTED}@`)
    .replace(PASSWORD_PARAM, `$1${REDACTED}`)
    .replace(PASSWORD_LITERAL, `$1'${REDACTED}'`)
    .replace(CONNINFO_PASSWORD, `$1${REDACTED}`)
    .replace(SCRAM_VERIFIER, REDACTED);
  return cleaned.length <= MAX_ERROR_CHARS ? cleaned : `${cleaned.slice(0, MAX_ERROR_CHARS - 1)}…`;
}
