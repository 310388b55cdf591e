// A small OTLP/HTTP receiver (JSON encoding, `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`) for tests, the local
// stack and the bench: it accepts what the services' OTLP exporters send to `/v1/traces` and `/v1/logs`,
// keeps the spans (flattened, attributes as plain values) and log records, and can append every request
// as one JSON line to a file (the OTLP JSON file format a collector's file exporter writes).
import { appendFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An attribute value as plain JSON. */
export type AttributeValue = string | number | boolean | null | readonly AttributeValue[];

/** One received span. */
export type ReceivedSpan = {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  readonly name: string;
  readonly kind: number;
  readonly startNs: bigint;
  readonly endNs: bigint;
  readonly attributes: Readonly<Record<string, AttributeValue>>;
  /** `service.name` of the resource that sent it. */
  readonly serviceName: string;
  readonly status: number;
};

/** A log record's body as plain JSON: a key-value list becomes an object, as the sender had it. */
export type BodyValue =
  string | number | boolean | null | readonly BodyValue[] | { readonly [key: string]: BodyValue };

/** One received log record. */
export type ReceivedLog = {
  /** The instrumentation scope (the OpenTelemetry logger's name). */
  readonly scope: string;
  readonly eventName: string | undefined;
  readonly severityNumber: number | undefined;
  readonly severityText: string | undefined;
  /** `timeUnixNano`: when the event happened, as the sender stated it. */
  readonly timeNs: bigint | undefined;
  readonly body: BodyValue;
  readonly attributes: Readonly<Record<string, AttributeValue>>;
  readonly traceId: string | undefined;
  readonly serviceName: string;
  /** Every attribute of the resource that sent it (`service.name`, `service.namespace`, `host.name`, ...). */
  readonly resource: Readonly<Record<string, AttributeValue>>;
};

type OtlpValue = {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpValue[] };
  kvlistValue?: { values?: OtlpKeyValue[] };
};
type OtlpKeyValue = { key: string; value?: OtlpValue };
type OtlpResource = { attributes?: OtlpKeyValue[] };

function plain(value: OtlpValue | undefined): AttributeValue {
  if (value === undefined) return null;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(plain);
  if (value.kvlistValue !== undefined) return JSON.stringify(attributesOf(value.kvlistValue.values));
  return null;
}

function bodyOf(value: OtlpValue | undefined): BodyValue {
  if (value?.kvlistValue !== undefined) {
    const out: Record<string, BodyValue> = {};
    for (const kv of value.kvlistValue.values ?? []) out[kv.key] = bodyOf(kv.value);
    return out;
  }
  if (value?.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(bodyOf);
  return plain(value) as BodyValue;
}

function attributesOf(list: readonly OtlpKeyValue[] | undefined): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const kv of list ?? []) out[kv.key] = plain(kv.value);
  return out;
}

function serviceNameOf(resource: OtlpResource | undefined): string {
  return String(attributesOf(resource?.attributes)['service.name'] ?? '');
}

type TraceRequest = {
  resourceSpans?: {
    resource?: OtlpResource;
    scopeSpans?: {
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind?: number;
        startTimeUnixNano: string | number;
        endTimeUnixNano: string | number;
        attributes?: OtlpKeyValue[];
        status?: { code?: number };
      }[];
    }[];
  }[];
};

type LogRequest = {
  resourceLogs?: {
    resource?: OtlpResource;
    scopeLogs?: {
      scope?: { name?: string };
      logRecords?: {
        eventName?: string;
        severityNumber?: number;
        severityText?: string;
        timeUnixNano?: string | number;
        body?: OtlpValue;
        attributes?: OtlpKeyValue[];
        traceId?: string;
      }[];
    }[];
  }[];
};

/** A running receiver; point `OTEL_EXPORTER_OTLP_ENDPOINT` at {@link OtlpReceiver.endpoint}. */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly logs: ReceivedLog[] = [];
  private constructor(
    private readonly server: Server,
    private readonly file: string | undefined,
    private readonly onSpans: ((spans: readonly ReceivedSpan[]) => void) | undefined,
    private readonly retain: boolean,
  ) {}

  /** Listens on 127.0.0.1 (a free port unless given). */
  static async start(
    options: {
      readonly port?: number;
      /** Append each request as one JSON line here. */
      readonly file?: string;
      /** Told about each batch of spans as it arrives. */
      readonly onSpans?: (spans: readonly ReceivedSpan[]) => void;
      /** Keep what arrives in {@link spans} and {@link logs} (default true; a long-running stack says no). */
      readonly retain?: boolean;
    } = {},
  ): Promise<OtlpReceiver> {
    const server = createServer();
    const receiver = new OtlpReceiver(server, options.file, options.onSpans, options.retain ?? true);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const status = receiver.receive(req.url ?? '', Buffer.concat(chunks).toString('utf8'));
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
    return receiver;
  }

  /** `http://127.0.0.1:<port>`: the base the OTLP exporters add `/v1/traces` and `/v1/logs` to. */
  get endpoint(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The variables that send a service's traces (and log records) here as OTLP JSON. */
  env(options: { readonly logs?: boolean } = {}): Record<string, string> {
    return {
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: this.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      ...(options.logs ? { OTEL_LOGS_EXPORTER: 'otlp' } : {}),
    };
  }

  /** The spans of one trace, by start time. */
  trace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((s) => s.traceId === traceId).sort((a, b) => (a.startNs < b.startNs ? -1 : 1));
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private receive(path: string, body: string): number {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return 400;
    }
    if (this.file !== undefined) appendFileSync(this.file, `${JSON.stringify(parsed)}\n`);
    if (path.startsWith('/v1/traces')) this.receiveSpans(parsed as TraceRequest);
    else if (path.startsWith('/v1/logs')) this.receiveLogs(parsed as LogRequest);
    else return 404;
    return 200;
  }

  private receiveSpans(request: TraceRequest): void {
    const batch: ReceivedSpan[] = [];
    for (const rs of request.resourceSpans ?? []) {
      const serviceName = serviceNameOf(rs.resource);
      for (const ss of rs.scopeSpans ?? [])
        for (const s of ss.spans ?? [])
          batch.push({
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId === undefined || s.parentSpanId === '' ? undefined : s.parentSpanId,
            name: s.name,
            kind: s.kind ?? 0,
            startNs: BigInt(s.startTimeUnixNano),
            endNs: BigInt(s.endTimeUnixNano),
            attributes: attributesOf(s.attributes),
            serviceName,
            status: s.status?.code ?? 0,
          });
    }
    if (this.retain) this.spans.push(...batch);
    this.onSpans?.(batch);
  }

  private receiveLogs(request: LogRequest): void {
    if (!this.retain) return;
    for (const rl of request.resourceLogs ?? []) {
      const serviceName = serviceNameOf(rl.resource);
      const resource = attributesOf(rl.resource?.attributes);
      for (const sl of rl.scopeLogs ?? [])
        for (const r of sl.logRecords ?? [])
          this.logs.push({
            scope: sl.scope?.name ?? '',
            eventName: r.eventName === '' ? undefined : r.eventName,
            severityNumber: r.severityNumber,
            severityText: r.severityText === '' ? undefined : r.severityText,
            timeNs: r.timeUnixNano === undefined ? undefined : BigInt(r.timeUnixNano),
            body: bodyOf(r.body),
            attributes: attributesOf(r.attributes),
            traceId: r.traceId === undefined || r.traceId === '' ? undefined : r.traceId,
            serviceName,
            resource,
          });
    }
  }
}
