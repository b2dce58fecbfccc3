/** A JSON object (not an array, not null): what the SDK checks an answer's body is before reading its fields. */
export function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
