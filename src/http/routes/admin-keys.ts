import type { FastifyRequest } from 'fastify';
import { generateKey } from '../../auth/api-keys.js';
import { adminKeyPatchFault, keyBody, parseKeyBody } from '../../auth/key-settings.js';
import { errors } from '../../errors.js';
import type { ApiKeyRecord } from '../../store/store.js';
import { pathParam, type DepsOf, type Handler } from '../route.js';
import { pageLimit, queryValue } from './task-ops.js';
import { requireJsonBody } from './tasks.js';

/** The admin keys module's: the key rows and the registry (its cache dropped at each change). */
type AdminKeyDeps = DepsOf<'store' | 'keys'>;

/**
 * `/v1/admin/keys` (docs/admin.md): client keys as an operator manages them, behind an admin
 * key. The admin API sees client keys that are not revoked; admin keys (from the environment or
 * `mediagate keys create --admin`) and revoked keys are `key_not_found` here, and are managed
 * with the CLI. A change applies at once in this process and, on PostgreSQL, in every other one
 * (a notification, migration 14); on SQLite other processes see it within the key cache's 5 s.
 */

/** A key id as a path or cursor carries it; anything else is no key. */
/** What a key id looks like (`key_` and hex, or a generated id): anything else is no key. */
export const KEY_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** The client key `id` as the admin API sees it: undefined when unknown, revoked or an admin key. */
async function visibleKey(deps: AdminKeyDeps, id: string, now: number): Promise<ApiKeyRecord | undefined> {
  if (!KEY_ID.test(id)) return undefined;
  const key = await deps.ctx.store.getKey(id, now);
  return key !== undefined && key.role === 'client' && key.revokedAt === null ? key : undefined;
}

async function requireKey(deps: AdminKeyDeps, request: FastifyRequest, now: number): Promise<ApiKeyRecord> {
  const id = pathParam(request, 'id');
  const key = await visibleKey(deps, id, now);
  if (key === undefined) throw errors.keyNotFound(id);
  return key;
}

/** `POST /v1/admin/keys`: 201 with the key object and `key`, the only time the key is shown. */
export function createAdminKey(deps: AdminKeyDeps): Handler {
  return async (request, reply) => {
    const settings = parseKeyBody(requireJsonBody(request), 'create');
    if (settings instanceof Error) throw settings;
    const key = generateKey();
    const id = await deps.ctx.keys.create(key, settings.name, { role: 'client', settings });
    const stored = await deps.ctx.store.getKey(id, Date.now());
    if (stored === undefined) throw new Error(`key ${id} vanished after insert`);
    void reply.code(201);
    return { ...keyBody(stored), key };
  };
}

/** `GET /v1/admin/keys`: newest first, `limit` (1-100, default 20) and `after` (a key id). */
export function listAdminKeys(deps: AdminKeyDeps): Handler {
  return async (request) => {
    const now = Date.now();
    const limit = pageLimit(request);
    const afterId = queryValue(request, 'after');
    let after: ApiKeyRecord | undefined;
    if (afterId !== undefined) {
      // A key revoked since the previous page still marks where the next one starts.
      after = KEY_ID.test(afterId) ? await deps.ctx.store.getKey(afterId, now) : undefined;
      if (after === undefined || after.role !== 'client') throw errors.invalidQuery('after', "after must be the id of a key (the previous page's last_id).");
    }
    const rows = await deps.ctx.store.listKeyPage('client', after, limit + 1, now);
    const page = rows.slice(0, limit);
    return { object: 'list', data: page.map(keyBody), has_more: rows.length > limit, last_id: page.at(-1)?.id ?? null };
  };
}

/** `GET /v1/admin/keys/{id}`: the key with what it spent and holds in its current budget period. */
export function getAdminKey(deps: AdminKeyDeps): Handler {
  return async (request) => keyBody(await requireKey(deps, request, Date.now()));
}

/** `PATCH /v1/admin/keys/{id}`: any create field and `disabled`; 200 with the key as GET shows it. */
export function patchAdminKey(deps: AdminKeyDeps): Handler {
  return async (request) => {
    const now = Date.now();
    const id = pathParam(request, 'id');
    // An unknown id is a 404 whatever the body; a known one with a bad body, the body's 400.
    if ((await visibleKey(deps, id, now)) === undefined) {
      // An admin key is not managed here (404), but a client-only setting sent to one is told why it cannot apply.
      const admin = KEY_ID.test(id) ? await deps.ctx.store.getKey(id, now) : undefined;
      const patch = admin?.role === 'admin' && admin.revokedAt === null ? parseKeyBody(requireJsonBody(request), 'patch') : undefined;
      if (patch instanceof Error) throw patch;
      const fault = patch === undefined ? undefined : adminKeyPatchFault(patch);
      if (fault) throw fault;
      throw errors.keyNotFound(id);
    }
    const patch = parseKeyBody(requireJsonBody(request), 'patch');
    if (patch instanceof Error) throw patch;
    if (!(await deps.ctx.store.updateKey(id, patch, now))) throw errors.keyNotFound(id);
    deps.ctx.keys.forgetAll();
    const updated = await visibleKey(deps, id, Date.now());
    if (updated === undefined) throw errors.keyNotFound(id);
    return keyBody(updated);
  };
}

/** `DELETE /v1/admin/keys/{id}`: revokes the key (401 at once; in another process on SQLite, within 5 s). */
export function deleteAdminKey(deps: AdminKeyDeps): Handler {
  return async (request) => {
    const key = await requireKey(deps, request, Date.now());
    if (!(await deps.ctx.store.revokeKey(key.id, Date.now()))) throw errors.keyNotFound(key.id);
    deps.ctx.keys.forgetAll();
    return { id: key.id, object: 'key', deleted: true };
  };
}
