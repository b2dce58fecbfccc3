/**
 * Whether traces are exported, read from OpenTelemetry's standard variables only (no setting of
 * ours): on with `OTEL_TRACES_EXPORTER=otlp`, or with that variable unset and an OTLP endpoint
 * given (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`); off without
 * them, with `OTEL_TRACES_EXPORTER=none`, or with `OTEL_SDK_DISABLED=true`.
 */

export type OtlpProtocol = 'http/protobuf' | 'http/json';

export interface TracingSettings {
  readonly protocol: OtlpProtocol;
  readonly serviceName: string;
}

export type Env = Readonly<Record<string, string | undefined>>;

const set = (value: string | undefined): value is string => value !== undefined && value.trim() !== '';

/** The settings when traces are wanted, undefined when they are not; throws on a value it cannot honour. */
export function tracingSettings(env: Env): TracingSettings | undefined {
  if (env['OTEL_SDK_DISABLED']?.trim().toLowerCase() === 'true') return undefined;
  const exporters = (env['OTEL_TRACES_EXPORTER'] ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
  const endpoint = set(env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']) || set(env['OTEL_EXPORTER_OTLP_ENDPOINT']);
  const wanted = exporters.length === 0 ? endpoint : exporters.includes('otlp');
  if (!wanted) return undefined;
  const unknown = exporters.filter((name) => name !== 'otlp' && name !== 'none');
  if (unknown.length > 0) throw new Error(`OTEL_TRACES_EXPORTER: only otlp (or none) is supported, not ${unknown.join(', ')}`);
  const protocol = (env['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'] ?? env['OTEL_EXPORTER_OTLP_PROTOCOL'] ?? 'http/protobuf').trim();
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') {
    throw new Error(`OTEL_EXPORTER_OTLP_PROTOCOL: http/protobuf or http/json, not ${protocol}`);
  }
  return { protocol, serviceName: set(env['OTEL_SERVICE_NAME']) ? env['OTEL_SERVICE_NAME'].trim() : 'mediagate' };
}
