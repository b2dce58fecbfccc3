import { getConsoleAsset, getConsolePage, getFavicon, redirectToConsole } from './console/console-assets.js';
import { IMAGE_STATUS_RESPONSE, VIDEO_TASK_RESPONSE } from '../wire/task-bodies.js';
import type { Route, Undocumented } from './route.js';
import { createAdminKeyDocs, deleteAdminKeyDocs, getAdminKeyDocs, listAdminKeysDocs, patchAdminKeyDocs, adminUsageDocs } from './routes/admin-docs.js';
import { getModelDocs, listModelsDocs } from './routes/models-docs.js';
import { recentTasksDocs } from './routes/recent-tasks-docs.js';
import { cancelDocs, listDocs } from './routes/task-ops-docs.js';
import { createDocs, eventsDocs, getTaskDocs } from './routes/tasks-docs.js';
import { usageDocs } from './routes/usage-docs.js';
import { createWebhookDocs, deleteWebhookDocs, listDeliveriesDocs, listWebhooksDocs, redeliverDocs } from './routes/webhooks-docs.js';
import { streamTaskEvents } from './routes/events.js';
import { getFile, getInput } from './routes/files.js';
import { getHealth, getMetrics, getOpenApi, getReadiness } from './routes/meta.js';
import { getDocsAsset } from './docs/assets.js';
import { getDocs } from './docs/page.js';
import { getModel, listModels } from './routes/models.js';
import { listRecentTasks } from './routes/recent-tasks.js';
import { cancelTask, listTasks } from './routes/task-ops.js';
import { createTask, createTaskFast, getTask, getTaskFast } from './routes/tasks.js';
import { createAdminKey, deleteAdminKey, getAdminKey, listAdminKeys, patchAdminKey } from './routes/admin-keys.js';
import { getAdminUsage, getUsage } from './routes/usage.js';
import { exportAdminUsage, exportAdminUsageOperation } from './routes/usage-export.js';
import { createWebhook, deleteWebhook, listWebhookDeliveries, listWebhooks, redeliverWebhook } from './routes/webhooks.js';
import { FRONT_DOOR_ROUTES } from '../frontdoors/routes.js';

// The rows outside the API's description, each saying why; every other row carries its operation.
const FILE_BYTES: Undocumented = { undocumented: 'the bytes behind the output and input URLs tasks carry (signed when configured)' };
const DESCRIPTION: Undocumented = { undocumented: 'the description itself (/openapi.json and the page rendered from it)' };
const PROBE: Undocumented = { undocumented: "operators' probes and metrics, not the API" };
const CONSOLE: Undocumented = { undocumented: 'the web console and its assets' };

/** Tasks: create, read, list, cancel and follow video tasks and image tasks. */
export const TASK_ROUTES: readonly Route[] = [
  {
    path: '/v1/video/generations',
    methods: ['POST'],
    family: 'video',
    auth: true,
    response: VIDEO_TASK_RESPONSE,
    handler: createTask('video'),
    ...createDocs('video'),
    fastCreate: createTaskFast('video'),
  },
  {
    path: '/v1/video/generations/:task_id',
    methods: ['GET'],
    family: 'video',
    auth: true,
    response: VIDEO_TASK_RESPONSE,
    handler: getTask('video'),
    ...getTaskDocs('video'),
    fast: getTaskFast('video'),
  },
  { path: '/v1/video/generations/:task_id/events', methods: ['GET'], family: 'video', auth: true, handler: streamTaskEvents('video'), ...eventsDocs('video') },
  { path: '/v1/video/generations', methods: ['GET'], family: 'video', auth: true, handler: listTasks('video'), ...listDocs('video') },
  {
    path: '/v1/video/generations/:task_id/cancel',
    methods: ['POST'],
    family: 'video',
    auth: true,
    response: VIDEO_TASK_RESPONSE,
    ignoresBody: true,
    handler: cancelTask('video'),
    ...cancelDocs('video'),
  },
  {
    path: '/v1/images/generations/async',
    methods: ['POST'],
    family: 'image',
    auth: true,
    handler: createTask('image'),
    ...createDocs('image'),
    fastCreate: createTaskFast('image'),
  },
  { path: '/v1/images/generations/async', methods: ['GET'], family: 'image', auth: true, handler: listTasks('image'), ...listDocs('image') },
  {
    path: '/v1/images/generations/async/:task_id/cancel',
    methods: ['POST'],
    family: 'image',
    auth: true,
    response: IMAGE_STATUS_RESPONSE,
    ignoresBody: true,
    handler: cancelTask('image'),
    ...cancelDocs('image'),
  },
  {
    path: '/v1/images/generations/async/:task_id',
    methods: ['GET'],
    family: 'image',
    auth: true,
    response: IMAGE_STATUS_RESPONSE,
    handler: getTask('image'),
    ...getTaskDocs('image'),
    fast: getTaskFast('image'),
  },
  {
    path: '/v1/images/generations/async/:task_id/events',
    methods: ['GET'],
    family: 'image',
    auth: true,
    handler: streamTaskEvents('image'),
    ...eventsDocs('image'),
  },
  // The console's history: the key's newest tasks of both families, with their prompts.
  { path: '/v1/tasks/recent', methods: ['GET'], family: 'video', auth: true, handler: listRecentTasks, ...recentTasksDocs },
];

/** The models this deployment offers. */
export const MODEL_ROUTES: readonly Route[] = [
  { path: '/v1/models', methods: ['GET'], family: 'video', auth: true, handler: listModels, ...listModelsDocs },
  { path: '/v1/models/*', methods: ['GET'], family: 'video', auth: true, handler: getModel, ...getModelDocs },
];

/** Webhook endpoints and their deliveries (docs/guides/webhooks.md). */
export const WEBHOOK_ROUTES: readonly Route[] = [
  { path: '/v1/webhooks', methods: ['POST'], family: 'video', auth: true, handler: createWebhook, ...createWebhookDocs },
  { path: '/v1/webhooks', methods: ['GET'], family: 'video', auth: true, handler: listWebhooks, ...listWebhooksDocs },
  { path: '/v1/webhooks/:webhook_id', methods: ['DELETE'], family: 'video', auth: true, handler: deleteWebhook, ...deleteWebhookDocs },
  { path: '/v1/webhooks/:webhook_id/deliveries', methods: ['GET'], family: 'video', auth: true, handler: listWebhookDeliveries, ...listDeliveriesDocs },
  {
    path: '/v1/webhooks/:webhook_id/deliveries/:delivery_id/redeliver',
    methods: ['POST'],
    family: 'video',
    auth: true,
    ignoresBody: true,
    handler: redeliverWebhook,
    ...redeliverDocs,
  },
];

/** Usage and budgets: a key's own usage, and the admin reports (docs/admin.md). */
export const USAGE_ROUTES: readonly Route[] = [
  { path: '/v1/usage', methods: ['GET'], family: 'video', auth: true, handler: getUsage, ...usageDocs },
  { path: '/v1/admin/usage', methods: ['GET'], family: 'video', auth: 'admin', handler: getAdminUsage, ...adminUsageDocs },
  { path: '/v1/admin/usage/export', methods: ['GET'], family: 'video', auth: 'admin', handler: exportAdminUsage, operation: exportAdminUsageOperation },
];

/** The admin API's keys (docs/admin.md): admin keys only; 404 while no admin key exists. */
export const ADMIN_KEY_ROUTES: readonly Route[] = [
  { path: '/v1/admin/keys', methods: ['POST'], family: 'video', auth: 'admin', handler: createAdminKey, ...createAdminKeyDocs },
  { path: '/v1/admin/keys', methods: ['GET'], family: 'video', auth: 'admin', handler: listAdminKeys, ...listAdminKeysDocs },
  { path: '/v1/admin/keys/:id', methods: ['GET'], family: 'video', auth: 'admin', handler: getAdminKey, ...getAdminKeyDocs },
  { path: '/v1/admin/keys/:id', methods: ['PATCH'], family: 'video', auth: 'admin', handler: patchAdminKey, ...patchAdminKeyDocs },
  { path: '/v1/admin/keys/:id', methods: ['DELETE'], family: 'video', auth: 'admin', handler: deleteAdminKey, ...deleteAdminKeyDocs },
];

/** Output and input bytes, the API's description and the web console. */
export const FILE_ROUTES: readonly Route[] = [
  { path: '/files/:task/:name', methods: ['GET'], family: 'video', auth: false, handler: getFile, operation: FILE_BYTES },
  { path: '/inputs/:folder/:name', methods: ['GET'], family: 'video', auth: false, handler: getInput, operation: FILE_BYTES },
  { path: '/openapi.json', methods: ['GET'], family: 'video', auth: false, handler: getOpenApi, operation: DESCRIPTION },
  { path: '/docs', methods: ['GET'], family: 'video', auth: false, handler: getDocs, operation: DESCRIPTION },
  { path: '/docs/assets/:name', methods: ['GET'], family: 'video', auth: false, handler: getDocsAsset, operation: DESCRIPTION },
  { path: '/', methods: ['GET'], family: 'video', auth: false, handler: redirectToConsole, operation: CONSOLE },
  { path: '/favicon.ico', methods: ['GET'], family: 'video', auth: false, handler: getFavicon, operation: CONSOLE },
  { path: '/console', methods: ['GET'], family: 'video', auth: false, handler: getConsolePage, operation: CONSOLE },
  { path: '/console/assets/:name', methods: ['GET'], family: 'video', auth: false, handler: getConsoleAsset, operation: CONSOLE },
];

/** Operators' probes and metrics. */
export const PROBE_ROUTES: readonly Route[] = [
  { path: '/healthz', methods: ['GET'], family: 'video', auth: false, handler: getHealth, operation: PROBE },
  { path: '/readyz', methods: ['GET'], family: 'video', auth: false, handler: getReadiness, operation: PROBE },
  { path: '/metrics', methods: ['GET'], family: 'video', auth: false, handler: getMetrics, operation: PROBE },
];

/**
 * Every route of the service, declared once, in the order of the modules that serve them
 * (src/modules/: each module serves one of the lists above; the composition root hands the
 * server the rows of the modules it runs). From the rows come the Fastify registration
 * (server.ts; a route registered any other way stops the build), the 405 answers and their
 * `Allow` (route-patterns.ts), the status fast path's match (dispatch.ts) and the metrics
 * labels, and /openapi.json (openapi.ts folds the rows' operations). A new route is a row in its
 * feature's list, its handler in `routes/` and its operation beside it
 * (`routes/<feature>-docs.ts`); test/route-table.test.ts walks the table over HTTP.
 */
export const ROUTES: readonly Route[] = [
  ...TASK_ROUTES,
  ...MODEL_ROUTES,
  ...WEBHOOK_ROUTES,
  ...FILE_ROUTES,
  ...USAGE_ROUTES,
  ...ADMIN_KEY_ROUTES,
  // The OpenAI-compatible front doors (src/frontdoors/, docs/guides/openai-clients.md).
  ...FRONT_DOOR_ROUTES,
  ...PROBE_ROUTES,
];
