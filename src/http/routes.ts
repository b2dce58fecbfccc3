import { getConsoleAsset, getConsolePage, getFavicon, redirectToConsole } from './console-assets.js';
import { IMAGE_STATUS_RESPONSE, VIDEO_TASK_RESPONSE } from '../wire/task-bodies.js';
import type { Route } from './route.js';
import { streamTaskEvents } from './routes/events.js';
import { getFile, getInput } from './routes/files.js';
import { getDocs, getHealth, getMetrics, getOpenApi, getReadiness } from './routes/meta.js';
import { getModel, listModels } from './routes/models.js';
import { cancelTask, listTasks } from './routes/task-ops.js';
import { createTask, getTask, getTaskFast } from './routes/tasks.js';
import { createAdminKey, deleteAdminKey, getAdminKey, listAdminKeys, patchAdminKey } from './routes/admin-keys.js';
import { getAdminUsage, getUsage } from './routes/usage.js';
import { createWebhook, deleteWebhook, listWebhookDeliveries, listWebhooks, redeliverWebhook } from './routes/webhooks.js';
import { FRONT_DOOR_ROUTES } from '../frontdoors/routes.js';

/**
 * Every route of the service, declared once. From this table come the Fastify registration
 * (server.ts; a route registered any other way stops the build), the 405 answers and their
 * `Allow` (route-patterns.ts), the status fast path's match (dispatch.ts) and the metrics
 * labels. A new route is a row here and its handler in `routes/`; test/route-table.test.ts
 * walks the table over HTTP.
 */
export const ROUTES: readonly Route[] = [
  { path: '/v1/video/generations', methods: ['POST'], family: 'video', auth: true, response: VIDEO_TASK_RESPONSE, handler: createTask('video') },
  {
    path: '/v1/video/generations/:task_id',
    methods: ['GET'],
    family: 'video',
    auth: true,
    response: VIDEO_TASK_RESPONSE,
    handler: getTask('video'),
    fast: getTaskFast('video'),
  },
  { path: '/v1/video/generations/:task_id/events', methods: ['GET'], family: 'video', auth: true, handler: streamTaskEvents('video') },
  { path: '/v1/video/generations', methods: ['GET'], family: 'video', auth: true, handler: listTasks('video') },
  {
    path: '/v1/video/generations/:task_id/cancel',
    methods: ['POST'],
    family: 'video',
    auth: true,
    response: VIDEO_TASK_RESPONSE,
    ignoresBody: true,
    handler: cancelTask('video'),
  },
  { path: '/v1/images/generations/async', methods: ['POST'], family: 'image', auth: true, handler: createTask('image') },
  { path: '/v1/images/generations/async', methods: ['GET'], family: 'image', auth: true, handler: listTasks('image') },
  {
    path: '/v1/images/generations/async/:task_id/cancel',
    methods: ['POST'],
    family: 'image',
    auth: true,
    response: IMAGE_STATUS_RESPONSE,
    ignoresBody: true,
    handler: cancelTask('image'),
  },
  {
    path: '/v1/images/generations/async/:task_id',
    methods: ['GET'],
    family: 'image',
    auth: true,
    response: IMAGE_STATUS_RESPONSE,
    handler: getTask('image'),
    fast: getTaskFast('image'),
  },
  { path: '/v1/images/generations/async/:task_id/events', methods: ['GET'], family: 'image', auth: true, handler: streamTaskEvents('image') },
  { path: '/v1/webhooks', methods: ['POST'], family: 'video', auth: true, handler: createWebhook },
  { path: '/v1/webhooks', methods: ['GET'], family: 'video', auth: true, handler: listWebhooks },
  { path: '/v1/webhooks/:webhook_id', methods: ['DELETE'], family: 'video', auth: true, handler: deleteWebhook },
  { path: '/v1/webhooks/:webhook_id/deliveries', methods: ['GET'], family: 'video', auth: true, handler: listWebhookDeliveries },
  {
    path: '/v1/webhooks/:webhook_id/deliveries/:delivery_id/redeliver',
    methods: ['POST'],
    family: 'video',
    auth: true,
    ignoresBody: true,
    handler: redeliverWebhook,
  },
  { path: '/v1/usage', methods: ['GET'], family: 'video', auth: true, handler: getUsage },
  // The OpenAI-compatible front doors (src/frontdoors/, docs/guides/openai-clients.md).
  ...FRONT_DOOR_ROUTES,
  // The admin API (docs/admin.md): admin keys only; 404 while no admin key exists.
  { path: '/v1/admin/keys', methods: ['POST'], family: 'video', auth: 'admin', handler: createAdminKey },
  { path: '/v1/admin/keys', methods: ['GET'], family: 'video', auth: 'admin', handler: listAdminKeys },
  { path: '/v1/admin/keys/:id', methods: ['GET'], family: 'video', auth: 'admin', handler: getAdminKey },
  { path: '/v1/admin/keys/:id', methods: ['PATCH'], family: 'video', auth: 'admin', handler: patchAdminKey },
  { path: '/v1/admin/keys/:id', methods: ['DELETE'], family: 'video', auth: 'admin', handler: deleteAdminKey },
  { path: '/v1/admin/usage', methods: ['GET'], family: 'video', auth: 'admin', handler: getAdminUsage },
  { path: '/v1/models', methods: ['GET'], family: 'video', auth: true, handler: listModels },
  { path: '/v1/models/*', methods: ['GET'], family: 'video', auth: true, handler: getModel },
  { path: '/files/:task/:name', methods: ['GET'], family: 'video', auth: false, handler: getFile },
  { path: '/inputs/:folder/:name', methods: ['GET'], family: 'video', auth: false, handler: getInput },
  { path: '/openapi.json', methods: ['GET'], family: 'video', auth: false, handler: getOpenApi },
  { path: '/docs', methods: ['GET'], family: 'video', auth: false, handler: getDocs },
  { path: '/healthz', methods: ['GET'], family: 'video', auth: false, handler: getHealth },
  { path: '/readyz', methods: ['GET'], family: 'video', auth: false, handler: getReadiness },
  { path: '/metrics', methods: ['GET'], family: 'video', auth: false, handler: getMetrics },
  { path: '/', methods: ['GET'], family: 'video', auth: false, handler: redirectToConsole },
  { path: '/favicon.ico', methods: ['GET'], family: 'video', auth: false, handler: getFavicon },
  { path: '/console', methods: ['GET'], family: 'video', auth: false, handler: getConsolePage },
  { path: '/console/assets/:name', methods: ['GET'], family: 'video', auth: false, handler: getConsoleAsset },
];
