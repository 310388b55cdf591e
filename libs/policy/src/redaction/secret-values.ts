// Which connection parts came from a Secret, and the one function that scrubs their values (in every
// encoding a message can carry them) from text before it is classified, stored, logged or published (ADR 0018).

/** A part of `spec.connection` a Secret can supply (`url`: the whole `secretRef` connection URL). */
export type ConnectionPart = 'url' | 'host' | 'port' | 'dbname' | 'username' | 'password' | 'sslMode';

/** A connection part read from a Secret: names only, never the value. */
export interface SecretSource {
  readonly part: ConnectionPart;
  /** The Secret's name (in the referring object's namespace). */
  readonly secret: string;
  readonly key: string;
}

/** A value no message may show, and the text that stands in its place. */
export interface SecretRedaction {
  readonly value: string;
  readonly label: string;
  /**
   * Also replace every IP address: a Secret-sourced host name reaches messages as the address it resolved to
   * (`connect ECONNREFUSED 10.1.2.3:5432`), which tells a reader about the value.
   */
  readonly addresses?: boolean;
}

/** What replaces a Secret-sourced value: the Secret and key it came from, never the value. */
export function secretLabel(secret: string, key: string): string {
  return `[Secret "${secret}" key "${key}"]`;
}

/** PostgreSQL truncates role and database names to NAMEDATALEN - 1 bytes and reports the truncated form. */
const NAME_BYTES = 63;

/**
 * The forms in which `value` can appear in a message: as is, trimmed (a Secret written with a trailing newline),
 * URL- and form-encoded, JSON-escaped, with SQL quotes doubled, and cut to PostgreSQL's 63-byte names.
 * Case is handled by the matcher (case-insensitive), so lowercased hosts are covered too.
 */
export function valueForms(value: string): string[] {
  const forms = new Set<string>();
  for (const base of new Set([value, value.trim()])) {
    if (base === '') continue;
    forms.add(base);
    forms.add(safe(() => encodeURIComponent(base)));
    forms.add(safe(() => encodeURIComponent(base).replaceAll('%20', '+')));
    forms.add(safe(() => encodeURI(base)));
    forms.add(JSON.stringify(base).slice(1, -1));
    forms.add(base.replaceAll('"', '""'));
    forms.add(base.replaceAll("'", "''"));
    forms.add(base.replaceAll('\\', '\\\\'));
    const cut = truncateToBytes(base, NAME_BYTES);
    if (cut !== base && cut !== '') forms.add(cut);
  }
  forms.delete('');
  return [...forms];
}

/** encodeURI* throw on lone surrogates; such a value is still matched raw. */
function safe(encode: () => string): string {
  try {
    return encode();
  } catch {
    return '';
  }
}

/** The longest prefix of `text` of at most `bytes` UTF-8 bytes that ends on a character boundary. */
function truncateToBytes(text: string, bytes: number): string {
  let used = 0;
  let out = '';
  for (const char of text) {
    used += Buffer.byteLength(char, 'utf8');
    if (used > bytes) break;
    out += char;
  }
  return out;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Replaces every occurrence of every value (in every form of {@link valueForms}, any letter case) with its
 * label, in one pass, so a label is never rewritten by a later value. Over-redaction is accepted: a value
 * that also occurs in the surrounding text is replaced there too.
 * @example redactValues('getaddrinfo ENOTFOUND db.internal', [{ value: 'db.internal', label: secretLabel('db', 'host') }])
 * // 'getaddrinfo ENOTFOUND [Secret "db" key "host"]'
 */
export function redactValues(text: string, redactions: readonly SecretRedaction[]): string {
  const labels = new Map<string, string>();
  for (const { value, label } of redactions) {
    for (const form of valueForms(value)) {
      const key = form.toLowerCase();
      if (!labels.has(key)) labels.set(key, label);
    }
  }
  const host = redactions.find((r) => r.addresses === true);
  if (labels.size === 0 && host === undefined) return text;
  const alternatives = [...labels.keys()].sort((a, b) => b.length - a.length).map(escapeRegExp);
  const pattern = alternatives.length === 0 ? null : new RegExp(alternatives.join('|'), 'giu');
  const scrub = (piece: string): string => {
    let out = piece;
    if (pattern !== null) {
      out = out.replace(pattern, (match) => labels.get(match.toLowerCase()) ?? secretLabel('?', '?'));
    }
    if (host !== undefined) out = out.replace(IPV4, host.label).replace(IPV6, host.label);
    return out;
  };
  // Our own labels are left whole, so redacting twice (the catalog, the inspector, then the planner) changes
  // nothing: a Secret named "postgres-credentials" keeps its name when the value "postgres" is redacted.
  const own = [...new Set(redactions.map((r) => r.label))].sort((a, b) => b.length - a.length);
  const split = new RegExp(`(${own.map(escapeRegExp).join('|')})`, 'u');
  return text
    .split(split)
    .map((piece, i) => (i % 2 === 1 ? piece : scrub(piece)))
    .join('');
}

const IPV4 = /(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w.])/g;
/** Hex groups and colons (`::1`, `fe80::1:2`); with a port glued on (`::1:5432`) the port goes too. */
const IPV6 = /(?<![\w:])(?=[0-9a-f:]*::?[0-9a-f]*:)(?:[0-9a-f]{0,4}:){2,8}[0-9a-f]{0,4}(?![\w:])/gi;

/** A resolved connection as far as redaction needs it (assignable from the kube and catalog shapes). */
export type RedactableConnection =
  | { readonly url: string }
  | {
      readonly params: {
        readonly host: string;
        readonly port?: number | null;
        readonly dbname: string;
        readonly username?: string | null;
        readonly password?: string | null;
        readonly sslMode?: string | null;
      };
    };

/**
 * The redactions of a resolved connection's Secret-sourced parts: each part's value as the catalog uses it,
 * labelled with its Secret and key. A URL from a Secret lends its host, port, database, user and password too.
 */
export function connectionRedactions(
  connection: RedactableConnection,
  sources: readonly SecretSource[],
): SecretRedaction[] {
  const out: SecretRedaction[] = [];
  for (const source of sources) {
    const label = secretLabel(source.secret, source.key);
    const addresses = source.part === 'host' || source.part === 'url';
    for (const value of partValues(connection, source.part)) {
      out.push(addresses ? { value, label, addresses } : { value, label });
    }
  }
  return out;
}

function partValues(connection: RedactableConnection, part: ConnectionPart): string[] {
  if ('url' in connection) return part === 'url' ? urlValues(connection.url) : [];
  if (part === 'url') return [];
  const value = connection.params[part];
  return value === null || value === undefined ? [] : [String(value)];
}

/** The URL and every component of it a message could echo (decoded and as written). */
function urlValues(url: string): string[] {
  const values = [url];
  try {
    const parsed = new URL(url.trim());
    const decode = (text: string): string => safe(() => decodeURIComponent(text)) || text;
    const path = parsed.pathname.replace(/^\//, '');
    values.push(parsed.hostname, parsed.hostname.replace(/^\[|\]$/g, ''), parsed.port);
    values.push(parsed.username, decode(parsed.username), parsed.password, decode(parsed.password));
    values.push(path, decode(path));
    for (const [, v] of parsed.searchParams) values.push(v);
  } catch {
    // An unparsable URL is redacted whole (listed above).
  }
  return values.filter((v) => v !== '');
}
