// Structured logs for every service: pino through nestjs-pino (the maintained Nest integration, Nest 12
// in its peer range). One JSON object per line by default (`LOG_FORMAT=json`), with the service name,
// Nest's context and whatever fields a call passes (kind, namespace, name, plan, digest);
// `LOG_FORMAT=pretty` prints the same records readably for a terminal (pino-pretty, synchronously).
// Secrets never reach a line: every message string goes through redactSecrets, and fields that hold
// credentials by name are censored.
import { redactSecrets, REDACTED } from '@rolepolicy/contracts';
import type { Params } from 'nestjs-pino';
import pino from 'pino';
import pretty from 'pino-pretty';
import type { BaseConfig } from './base-config.js';

/** Fields a log call may attach (pass `{ msg, ...fields }` as the message of a Nest Logger call). */
export type LogFields = {
  /** Kubernetes kind, namespace and name of the resource the line is about. */
  readonly kind?: string;
  readonly namespace?: string;
  readonly name?: string;
  /** Plan name and change digest. */
  readonly plan?: string;
  readonly digest?: string;
  readonly [field: string]: unknown;
};

/** A structured log record: a message plus fields (what Nest Logger calls accept as their message). */
export type LogRecord = LogFields & { readonly msg: string };

/** `{ msg, ...fields }`, for `logger.log(logRecord('plan applied', { plan, digest }))`. */
export function logRecord(msg: string, fields: LogFields): LogRecord {
  return { msg, ...fields };
}

/** Nest's level names as pino's. */
const PINO_LEVEL: Readonly<Record<BaseConfig['LOG_LEVEL'], pino.Level>> = {
  error: 'error',
  warn: 'warn',
  log: 'info',
  debug: 'debug',
  verbose: 'trace',
};

/** Field names whose values are credentials wherever they appear in a record. */
const SECRET_FIELDS = [
  'password',
  'passwd',
  'secret',
  'token',
  'verifier',
  'authorization',
  'DATABASE_URL',
  'connectionString',
  'url',
];

/** Redacts the strings a log call passes (messages and format arguments); objects go through `redact`. */
function redactArgs(args: unknown[]): unknown[] {
  return args.map((arg) => {
    if (typeof arg === 'string') return redactSecrets(arg);
    if (typeof arg === 'object' && arg !== null && !(arg instanceof Error) && 'msg' in arg) {
      const record = arg as { msg: unknown };
      if (typeof record.msg === 'string') return { ...arg, msg: redactSecrets(record.msg) };
    }
    if (arg instanceof Error) {
      const copy = new Error(redactSecrets(arg.message));
      copy.name = arg.name;
      copy.stack = arg.stack === undefined ? undefined : redactSecrets(arg.stack);
      return copy;
    }
    return arg;
  });
}

/** pino options shared by both formats. */
export function pinoOptions(service: string, level: BaseConfig['LOG_LEVEL']): pino.LoggerOptions {
  return {
    level: PINO_LEVEL[level],
    base: { service: `rolepolicy-${service}`, pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: {
      paths: SECRET_FIELDS.flatMap((f) => [f, `*.${f}`]),
      censor: REDACTED,
    },
    hooks: {
      logMethod(args, method) {
        method.apply(this, redactArgs(args) as Parameters<typeof method>);
      },
    },
  };
}

/** The readable form (`LOG_FORMAT=pretty`): `[time] LEVEL: [service] context: message`, fields below. */
export function prettyStream(destination: NodeJS.WritableStream, colorize: boolean): pretty.PrettyStream {
  return pretty({
    sync: true,
    destination,
    colorize,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,service,context',
    messageFormat: '[{service}] {if context}{context}: {end}{msg}',
  });
}

/** The nestjs-pino parameters of one service; HTTP requests (probes, scrapes) are not logged. */
export function loggerParams(service: string, config: Pick<BaseConfig, 'LOG_LEVEL' | 'LOG_FORMAT'>): Params {
  const options = pinoOptions(service, config.LOG_LEVEL);
  // process.stdout (synchronous for files and pipes on Linux) rather than a raw fd: whoever owns the
  // process's stdout, a test's capture included, sees every line.
  const stream =
    config.LOG_FORMAT === 'pretty'
      ? prettyStream(process.stdout, process.stdout.isTTY === true)
      : process.stdout;
  return {
    pinoHttp: [{ ...options, autoLogging: false, quietReqLogger: true }, stream],
  };
}
