/**
 * Which operations added after the seed (decisions §8) this server has: read from its
 * public OpenAPI document, so the console never asks for an operation that is not there (a
 * probe that fails would be an error in the browser console). A listed operation that still
 * answers 404/405 is treated as absent by its caller.
 */
export interface Capabilities {
  readonly events: boolean;
  readonly list: boolean;
  readonly cancel: boolean;
}

type Paths = Record<string, Record<string, unknown> | undefined>;

export async function readCapabilities(): Promise<Capabilities> {
  let paths: Paths = {};
  try {
    const response = await fetch('/openapi.json', { cache: 'no-store' });
    if (response.ok) paths = ((await response.json()) as { paths?: Paths }).paths ?? {};
  } catch {
    // Unreachable or not JSON: the seed's operations only.
  }
  const has = (pattern: RegExp, method: string): boolean => Object.entries(paths).some(([path, item]) => pattern.test(path) && item?.[method] !== undefined);
  return {
    events: has(/^\/v1\/video\/generations\/\{[^}]+\}\/events$/, 'get'),
    list: has(/^\/v1\/video\/generations$/, 'get'),
    cancel: has(/^\/v1\/video\/generations\/\{[^}]+\}\/cancel$/, 'post'),
  };
}
