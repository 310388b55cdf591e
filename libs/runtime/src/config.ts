// Declarative environment configuration: each variable has a parser, an optional default and a doc
// line (the README tables come from the same declarations). Loading reports every bad variable at once;
// only file variables touch the file system (is it readable?).
import { accessSync, constants, statSync } from 'node:fs';

/** One environment variable: how to parse it, its default and what it means. */
export type EnvVar<T> = {
  readonly doc: string;
  /** Raw default used when the variable is unset or empty; no default means required. */
  readonly default?: string;
  /** Turns the raw string into a value, or returns an error text (which must not echo the value). */
  readonly parse: (
    raw: string,
  ) => { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };
};

/** A service's variables, keyed by variable name. */
export type EnvSpec = Readonly<Record<string, EnvVar<unknown>>>;

/** The typed configuration a spec yields. */
export type ConfigOf<S extends EnvSpec> = {
  readonly [K in keyof S]: S[K] extends EnvVar<infer T> ? T : never;
};

/** One variable that is missing or malformed. */
export type ConfigProblem = { readonly name: string; readonly problem: string };

/** Thrown by {@link loadConfig}; its message names every offending variable. */
export class ConfigError extends Error {
  constructor(readonly problems: readonly ConfigProblem[]) {
    super(`invalid configuration: ${problems.map((p) => `${p.name} ${p.problem}`).join('; ')}`);
    this.name = 'ConfigError';
  }
}

const ok = <T>(value: T) => ({ ok: true as const, value });
const fail = (error: string) => ({ ok: false as const, error });

/** Constructors for common variable kinds. */
export const env = {
  /** A TCP port 1..65535. */
  port(doc: string, defaultValue?: number): EnvVar<number> {
    return {
      doc,
      ...(defaultValue === undefined ? {} : { default: String(defaultValue) }),
      parse: (raw) => {
        const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
        return Number.isInteger(n) && n >= 1 && n <= 65535
          ? ok(n)
          : fail('must be a port number between 1 and 65535');
      },
    };
  },
  /** A positive integer, e.g. a timeout in milliseconds. */
  positiveInt(doc: string, defaultValue?: number): EnvVar<number> {
    return {
      doc,
      ...(defaultValue === undefined ? {} : { default: String(defaultValue) }),
      parse: (raw) => {
        const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
        return Number.isSafeInteger(n) && n > 0 ? ok(n) : fail('must be a positive integer');
      },
    };
  },
  /** An integer within `min..max` (inclusive), e.g. a bounded concurrency. */
  intInRange(doc: string, min: number, max: number, defaultValue?: number): EnvVar<number> {
    return {
      doc,
      ...(defaultValue === undefined ? {} : { default: String(defaultValue) }),
      parse: (raw) => {
        const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
        return Number.isSafeInteger(n) && n >= min && n <= max
          ? ok(n)
          : fail(`must be an integer between ${min} and ${max}`);
      },
    };
  },
  /** A comma-separated list of URLs with one of the given protocols (e.g. `nats:`); values may hold credentials. */
  urls(doc: string, protocols: readonly string[], defaultValue?: string): EnvVar<readonly string[]> {
    return {
      doc,
      ...(defaultValue === undefined ? {} : { default: defaultValue }),
      parse: (raw) => {
        const items = raw
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s.length > 0);
        if (items.length === 0) return fail('must list at least one URL');
        for (const item of items) {
          let url: URL;
          try {
            url = new URL(item);
          } catch {
            return fail(`must be a URL (${protocols.join(' or ')})`);
          }
          if (!protocols.includes(url.protocol)) return fail(`must use ${protocols.join(' or ')}`);
        }
        return ok(items);
      },
    };
  },
  /** A single URL with one of the given protocols; values may hold credentials and are never echoed. */
  url(doc: string, protocols: readonly string[], defaultValue?: string): EnvVar<string> {
    const list = env.urls(doc, protocols, defaultValue);
    return {
      ...list,
      parse: (raw) => {
        const parsed = list.parse(raw);
        if (!parsed.ok) return parsed;
        return parsed.value.length === 1 && parsed.value[0] !== undefined
          ? ok(parsed.value[0])
          : fail('must be a single URL');
      },
    };
  },
  /** One of a fixed set of words. */
  oneOf<const T extends string>(doc: string, values: readonly T[], defaultValue?: T): EnvVar<T> {
    return {
      doc,
      ...(defaultValue === undefined ? {} : { default: defaultValue }),
      parse: (raw) =>
        (values as readonly string[]).includes(raw)
          ? ok(raw as T)
          : fail(`must be one of ${values.join(', ')}`),
    };
  },
  /** Free text within a length limit. */
  text(doc: string, defaultValue?: string, maxLength = 256): EnvVar<string> {
    return {
      doc,
      ...(defaultValue === undefined ? {} : { default: defaultValue }),
      parse: (raw) => (raw.length <= maxLength ? ok(raw) : fail(`must be at most ${maxLength} characters`)),
    };
  },
  /**
   * An optional path to a readable file (credentials, keys, certificates); `undefined` when unset. Only
   * whether the file can be read is checked here; the path and the contents are never echoed.
   */
  optionalFile(doc: string): EnvVar<string | undefined> {
    return {
      doc,
      default: '',
      parse: (raw) => {
        if (raw === '') return ok(undefined);
        try {
          accessSync(raw, constants.R_OK);
          return statSync(raw).isFile() ? ok(raw) : fail('must name a file, not a directory');
        } catch {
          return fail('must name a readable file');
        }
      },
    };
  },
  /** Optional free text (e.g. a user name or a password); `undefined` when unset, never echoed. */
  optionalText(doc: string, maxLength = 256): EnvVar<string | undefined> {
    return {
      doc,
      default: '',
      parse: (raw) =>
        raw === ''
          ? ok(undefined)
          : raw.length <= maxLength
            ? ok(raw)
            : fail(`must be at most ${maxLength} characters`),
    };
  },
} as const;

/**
 * Reads `spec` from `source` (normally `process.env`). Unset or empty variables take their default.
 * @throws ConfigError naming every missing or malformed variable (values are never echoed)
 */
export function loadConfig<S extends EnvSpec>(
  spec: S,
  source: Readonly<Record<string, string | undefined>>,
): ConfigOf<S> {
  const problems: ConfigProblem[] = [];
  const values: Record<string, unknown> = {};
  for (const [name, variable] of Object.entries(spec)) {
    const given = source[name];
    const raw = given === undefined || given === '' ? variable.default : given;
    if (raw === undefined) {
      problems.push({ name, problem: 'is required but not set' });
      continue;
    }
    const parsed = variable.parse(raw);
    if (parsed.ok) values[name] = parsed.value;
    else problems.push({ name, problem: parsed.error });
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return values as ConfigOf<S>;
}
