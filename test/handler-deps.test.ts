/**
 * Handlers name their module's part of the server's context (`DepsOf`, http/route.ts): the
 * context fields and the server parts each reads, and no more. A handler widened back to the
 * whole `RouteDeps`, or reaching one more field, fails here at the typecheck
 * (`npx tsc -p tsconfig.json` checks test/; vitest's expectTypeOf is a type-level assertion).
 */
import { describe, expectTypeOf, it } from 'vitest';
import { deleteVideo, getVideo, getVideoContent, listVideos } from '../src/frontdoors/videos.js';
import { streamTaskEvents } from '../src/http/routes/events.js';
import { getMetrics, getOpenApi, getReadiness } from '../src/http/routes/meta.js';
import { listRecentTasks } from '../src/http/routes/recent-tasks.js';
import { cancelTask, listTasks } from '../src/http/routes/task-ops.js';

/** What a handler factory is given. */
type Part<F> = F extends (deps: infer D) => unknown ? D : never;
type ContextFields<F> = keyof (Part<F> extends { readonly ctx: infer C } ? C : never);
type ServerParts<F> = Exclude<keyof Part<F>, 'ctx'>;

describe("handlers take their module's part of the context", () => {
  it('probes and /openapi.json', () => {
    expectTypeOf<ContextFields<typeof getReadiness>>().toEqualTypeOf<'store' | 'storage' | 'health'>();
    expectTypeOf<ServerParts<typeof getReadiness>>().toEqualTypeOf<never>();
    expectTypeOf<ContextFields<typeof getMetrics>>().toEqualTypeOf<'metricsToken' | 'metrics' | 'store'>();
    expectTypeOf<ContextFields<typeof getOpenApi>>().toEqualTypeOf<'publicUrl' | 'pricing' | 'models' | 'now'>();
    expectTypeOf<ServerParts<typeof getOpenApi>>().toEqualTypeOf<'routes'>();
  });

  it('event streams, cancels, lists and the recent tasks', () => {
    type Events = ReturnType<typeof streamTaskEvents>;
    expectTypeOf<ContextFields<Events>>().toEqualTypeOf<'feed' | 'service' | 'sseKeepAliveMs'>();
    expectTypeOf<ServerParts<Events>>().toEqualTypeOf<'urlFor' | 'currency' | 'streams' | 'closing'>();
    type Presenting = ReturnType<typeof cancelTask> | ReturnType<typeof listTasks> | typeof listRecentTasks;
    expectTypeOf<ContextFields<Presenting>>().toEqualTypeOf<'service'>();
    expectTypeOf<ServerParts<Presenting>>().toEqualTypeOf<'urlFor' | 'currency'>();
  });

  it("the front doors' reads, content and delete", () => {
    expectTypeOf<ContextFields<typeof getVideo>>().toEqualTypeOf<'service' | 'outputTtlMs'>();
    expectTypeOf<ContextFields<typeof listVideos>>().toEqualTypeOf<'service' | 'outputTtlMs'>();
    expectTypeOf<ContextFields<typeof getVideoContent>>().toEqualTypeOf<'service' | 'storage'>();
    expectTypeOf<ContextFields<typeof deleteVideo>>().toEqualTypeOf<'service' | 'storage'>();
    expectTypeOf<ServerParts<typeof deleteVideo>>().toEqualTypeOf<never>();
  });
});
