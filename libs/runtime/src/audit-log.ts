// Writes audit records (libs/contracts audit-record.ts) twice: one JSON line on stdout (or appended to
// AUDIT_LOG_FILE) under the logger name `audit`, at every LOG_LEVEL (a compliance trail is not diagnostics),
// and one OpenTelemetry log record on the logger `rolepolicy.audit`, which the global LoggerProvider exports
// over OTLP when one is registered (OTEL_LOGS_EXPORTER=otlp) and which costs nothing otherwise.
import { appendFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { Logger } from '@nestjs/common';
import { logs, SeverityNumber, type AnyValueMap, type Logger as OtelLogger } from '@opentelemetry/api-logs';
import {
  AUDIT_LOGGER,
  AUDIT_OTEL_LOGGER,
  validateAuditRecord,
  type AuditRecord,
} from '@rolepolicy/contracts';
import pino from 'pino';
import type { BaseConfig } from './base-config.js';
import { pinoOptions, prettyStream } from './logging.js';

/** Where a service's audit records go. */
export interface AuditSink {
  /** Writes one record; never throws (a record that breaks the schema is written and reported). */
  write(record: AuditRecord): void;
}

/** The replica writing a record: `HOSTNAME` (the pod name in a cluster), else the host name and pid. */
export function auditInstance(env: NodeJS.ProcessEnv = process.env): string {
  const host = env['HOSTNAME'];
  return host !== undefined && host !== ''
    ? host.slice(0, 253)
    : `${hostname()}/${process.pid}`.slice(0, 253);
}

/** A sink that keeps nothing (for code constructed outside a service, e.g. unit tests of one class). */
export const NO_AUDIT: AuditSink = { write: () => undefined };

/** Reports schema violations of a record (a bug in a builder): its event and the failing paths, no values. */
const violations = new Logger('AuditLog');

/** The summary line of a record: event and object, e.g. `plan.applied PostgresPolicyPlan shop/orders-3f2c`. */
export function auditMessage(record: AuditRecord): string {
  return `${record.event} ${record.object.kind} ${record.object.namespace}/${record.object.name}`;
}

/** The OpenTelemetry form: the record as the body, its identity as attributes for a collector's indexes. */
export function otelAuditRecord(record: AuditRecord): Parameters<OtelLogger['emit']>[0] {
  return {
    eventName: `rolepolicy.audit.${record.event}`,
    timestamp: new Date(record.at),
    severityNumber: SeverityNumber.INFO,
    severityText: 'INFO',
    body: JSON.parse(JSON.stringify(record)) as AnyValueMap,
    attributes: {
      'rolepolicy.audit.id': record.id,
      'rolepolicy.audit.event': record.event,
      'rolepolicy.audit.schema_version': record.v,
      'rolepolicy.audit.source': record.source,
      'k8s.namespace.name': record.object.namespace,
      'rolepolicy.object.kind': record.object.kind,
      'rolepolicy.object.name': record.object.name,
      ...(record.object.uid === null ? {} : { 'rolepolicy.object.uid': record.object.uid }),
    },
  };
}

/** Why a file operation failed, without the path or message (an errno code such as `ENOSPC`). */
const failure = (error: unknown): string => (error as { code?: string }).code ?? 'error';

/**
 * The lines of AUDIT_LOG_FILE: each appended (open, write, close) before the record's `write` returns, so
 * a record is in the file even if the process dies right after, and a rotated file is created again. An
 * append that fails goes to `fallback` (stdout) instead, with an error line: a record is never dropped.
 * @throws Error when the file cannot be appended to at start (the service must not run without its trail)
 */
function auditFile(path: string, fallback: NodeJS.WritableStream): pino.DestinationStream {
  try {
    appendFileSync(path, '');
  } catch (error) {
    throw new Error(`cannot append to AUDIT_LOG_FILE: ${failure(error)}`, { cause: error });
  }
  return {
    write: (line: string) => {
      try {
        appendFileSync(path, line);
      } catch (error) {
        violations.error(
          `audit record not appended to AUDIT_LOG_FILE (${failure(error)}): written to stdout`,
        );
        fallback.write(line);
      }
    },
  };
}

/** How many record ids a writer remembers to skip its own repeats (a pass deciding the same event again). */
export const AUDIT_RECENT_IDS = 10_000;

/**
 * The audit writer of one service. A record whose id this writer wrote among its last
 * {@link AUDIT_RECENT_IDS} is not written again: a level-triggered loop may decide one event on several
 * passes (a deleted request is released on each pass until its finalizer is gone). Another process (a new
 * leader, another replica) may still write it again; consumers keep the first of each id (docs/audit.md).
 */
export class AuditLog implements AuditSink {
  private readonly lines: pino.Logger;
  private readonly recent = new Set<string>();

  /**
   * @param config `AUDIT_LOG_FILE` set: the lines are appended there (always JSON), not printed
   * @throws Error when AUDIT_LOG_FILE cannot be appended to
   */
  constructor(
    service: string,
    config: Pick<BaseConfig, 'LOG_FORMAT'> & { readonly AUDIT_LOG_FILE?: string | undefined },
    stdout: NodeJS.WritableStream = process.stdout,
  ) {
    // The service's pino options (base fields, redaction) at level info whatever LOG_LEVEL says.
    const stream =
      config.AUDIT_LOG_FILE !== undefined
        ? auditFile(config.AUDIT_LOG_FILE, stdout)
        : config.LOG_FORMAT === 'pretty'
          ? prettyStream(stdout, false)
          : stdout;
    this.lines = pino(pinoOptions(service, 'log'), stream as pino.DestinationStream).child({
      context: AUDIT_LOGGER,
    });
  }

  write(record: AuditRecord): void {
    if (this.recent.has(record.id)) return;
    this.recent.add(record.id);
    if (this.recent.size > AUDIT_RECENT_IDS) this.recent.delete(this.recent.values().next().value!);
    const checked = validateAuditRecord(record);
    if (!checked.ok) violations.error(`audit record ${record.event} breaks its schema: ${checked.detail}`);
    this.lines.info({ audit: record }, auditMessage(record));
    // Looked up per record: the provider may be registered after this service started (telemetry setup).
    logs.getLogger(AUDIT_OTEL_LOGGER).emit(otelAuditRecord(record));
  }
}
