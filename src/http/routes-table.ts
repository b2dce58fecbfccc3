/**
 * The service's paths and their methods, used to tell 405 (known path, wrong method) from 404.
 * Keep in step with the routes registered in app.ts (a test walks this table).
 */
export const ROUTES: readonly { readonly pattern: RegExp; readonly methods: readonly string[] }[] = [
  { pattern: /^\/v1\/video\/generations$/, methods: ['POST'] },
  { pattern: /^\/v1\/video\/generations\/[^/]+$/, methods: ['GET'] },
  { pattern: /^\/v1\/images\/generations\/async$/, methods: ['POST'] },
  { pattern: /^\/v1\/images\/generations\/async\/[^/]+$/, methods: ['GET'] },
  { pattern: /^\/v1\/models(\/.+)?$/, methods: ['GET'] },
  { pattern: /^\/files\/[^/]+\/[^/]+$/, methods: ['GET', 'HEAD'] },
  { pattern: /^\/(openapi\.json|docs|healthz|readyz|metrics)$/, methods: ['GET'] },
  { pattern: /^\/(console(\/assets\/[^/]+)?|favicon\.ico)?$/, methods: ['GET', 'HEAD'] },
];

export function allowedMethods(path: string): readonly string[] | undefined {
  const clean = path.replace(/\/+$/, '') || '/';
  return ROUTES.find((route) => route.pattern.test(clean))?.methods;
}
