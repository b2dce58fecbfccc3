import type { Route } from '../route.js';

/** Methods in the order an `Allow` header lists them. */
const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** A route pattern as a regular expression over a path (no query), with its parameter names. */
export interface CompiledPattern {
  readonly regex: RegExp;
  readonly params: readonly string[];
}

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * `/v1/video/generations/:task_id` -> `^\/v1\/video\/generations\/(<segment>)$`; a final `*` is
 * the rest of the path. `segment` is what one parameter may be: any segment for the 405
 * answers, a plain id for the fast path (anything odd is left to the router).
 */
export function compilePattern(path: string, segment = '[^/]+'): CompiledPattern {
  const params: string[] = [];
  const source = path
    .split('/')
    .map((part) => {
      if (part.startsWith(':')) {
        params.push(part.slice(1));
        return `(${segment})`;
      }
      if (part === '*') {
        params.push('*');
        return '(.+)';
      }
      return escape(part);
    })
    .join('\\/');
  return { regex: new RegExp(`^${source}$`), params };
}

/**
 * The methods a path answers (HEAD wherever GET), from every row whose pattern matches it, or
 * undefined when no row does: a 405 with this `Allow`, or a 404.
 */
export function allowedMethodsFor(routes: readonly Route[]): (path: string) => readonly string[] | undefined {
  const compiled = routes.map((route) => ({ route, regex: compilePattern(route.path).regex }));
  return (path) => {
    // Fastify ignores a trailing slash (`ignoreTrailingSlash`), so this does too.
    const clean = path.replace(/\/+$/, '') || '/';
    const methods = new Set<string>();
    for (const { route, regex } of compiled) {
      if (!regex.test(clean)) continue;
      for (const method of route.methods) methods.add(method);
    }
    if (methods.size === 0) return undefined;
    if (methods.has('GET')) methods.add('HEAD');
    return METHOD_ORDER.filter((method) => methods.has(method));
  };
}
