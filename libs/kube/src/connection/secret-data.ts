// Reading one key of a Kubernetes Secret as the API (data, base64) or a manifest (stringData) gives it.
// Pure; the caller passes a lookup over its cache. Values never leave through messages or errors.

/** The part of a v1 Secret the resolvers read. */
export interface SecretLike {
  readonly metadata?: { readonly name?: string; readonly resourceVersion?: string } | null;
  /** Base64 values, as the API server returns them. */
  readonly data?: Readonly<Record<string, string>> | null;
  /** Plain values (manifests, emulator); they win over `data` as on a real API write. */
  readonly stringData?: Readonly<Record<string, string>> | null;
}

/** Finds a Secret of the referring object's namespace by name (undefined when absent). */
export type SecretLookup = (name: string) => SecretLike | undefined;

/** Why a Secret could not give a value; messages name the Secret and key, never a value. */
export type SecretFailureReason = 'SecretMissing' | 'SecretKeyMissing' | 'SecretValueEmpty';

/** A value read from a Secret, with the Secret's resourceVersion. */
export type SecretRead =
  | { readonly ok: true; readonly value: string; readonly resourceVersion: string }
  | { readonly ok: false; readonly reason: SecretFailureReason; readonly message: string };

/** The resourceVersion of a Secret ('' when the object carries none, e.g. a hand-built manifest). */
export function resourceVersionOf(secret: SecretLike): string {
  return secret.metadata?.resourceVersion ?? '';
}

/** Reads `key` of Secret `name` from `namespace` through `lookup`. */
export function readSecretKey(
  namespace: string,
  name: string,
  key: string,
  lookup: SecretLookup,
): SecretRead {
  const secret = lookup(name);
  if (secret === undefined) {
    return { ok: false, reason: 'SecretMissing', message: `Secret ${namespace}/${name} not found` };
  }
  const plain = secret.stringData ?? {};
  const encoded = secret.data ?? {};
  let value: string | undefined;
  if (Object.hasOwn(plain, key)) value = plain[key];
  else if (Object.hasOwn(encoded, key)) value = Buffer.from(encoded[key] ?? '', 'base64').toString('utf8');
  if (value === undefined) {
    return {
      ok: false,
      reason: 'SecretKeyMissing',
      message: `Secret ${namespace}/${name} has no key ${key}`,
    };
  }
  if (value === '') {
    // An empty value is never a usable password or URL: say so rather than set or skip one silently.
    return {
      ok: false,
      reason: 'SecretValueEmpty',
      message: `Secret ${namespace}/${name} key ${key} is empty`,
    };
  }
  return { ok: true, value, resourceVersion: resourceVersionOf(secret) };
}
