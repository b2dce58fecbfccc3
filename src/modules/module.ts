import type { Config } from '../config.js';
import type { Route } from '../http/route.js';
import type { Loop } from '../loop.js';

/**
 * One feature of the service, in the manner of a Fastify plugin: what it reads of the
 * configuration, the route rows it serves (each carrying its whole OpenAPI operation), the
 * background loops it runs, and how it starts and stops. The composition root
 * (service-factory.ts) is a list of modules over the shared floors (floors.ts: store, media,
 * signing, keys, the task service); adding a feature is a module file and one line there
 * (docs/architecture.md, "Adding a feature").
 */
export interface Module {
  readonly name: string;
  /**
   * The fields of the frozen `Config` this module reads: its own, declared in its slice
   * (modules/slices/<module>.ts: each field's variable, default, unit and reader), and the shared
   * ones of config.ts. config.ts reads every slice once with the shared fields; a module is given
   * its part (`ConfigSlice`), so its code cannot read another feature's settings unseen.
   */
  readonly config: readonly (keyof Config)[];
  /** Its rows of the route table (http/routes.ts); none in a worker-only process. */
  readonly routes: readonly Route[];
  /** Started by the root after `start`, stopped (each awaiting its running turn) before `close`. */
  readonly loops: readonly Loop[];
  /** Starts the module's own work (workers, dispatchers), after the server listens. */
  start?(): Promise<void> | void;
  /** Ends it: running work finishes or is handed back within `drainMs`. */
  close?(drainMs: number): Promise<void>;
}

/** The part of the configuration a module declared. */
export type ConfigSlice<K extends keyof Config> = Pick<Config, K>;

/** Starts the modules in order: each one's `start`, then its loops. */
export async function startModules(modules: readonly Module[]): Promise<void> {
  for (const module of modules) {
    await module.start?.();
    for (const loop of module.loops) loop.start();
  }
}

/** Stops every module at once: its loops first (no new turn), then its `close`. */
export async function closeModules(modules: readonly Module[], drainMs: number): Promise<void> {
  await Promise.all(
    modules.map(async (module) => {
      await Promise.all(module.loops.map((loop) => loop.stop()));
      await module.close?.(drainMs);
    }),
  );
}

/** Every route row of the modules, in their order. */
export function routesOf(modules: readonly Module[]): Route[] {
  return modules.flatMap((module) => module.routes);
}
