import { ADMIN_KEY_ROUTES } from '../http/routes.js';
import type { Floors } from './floors.js';
import type { Module } from './module.js';

/**
 * The admin API's keys (docs/admin.md). The key registry is a floor (every request's auth reads
 * it); this module serves the admin routes and keeps the registry's cache honest: a key another
 * process disabled, revoked or changed is refused here at once, not after the cache's 5 s.
 */
export function adminKeysModule(floors: Floors): Module {
  const unwatch = floors.openFeed().watchKeys(() => floors.keys.forgetAll());
  return {
    name: 'admin-keys',
    config: ['adminKeys', 'apiKeys'],
    routes: ADMIN_KEY_ROUTES,
    loops: [],
    close() {
      unwatch();
      return Promise.resolve();
    },
  };
}
