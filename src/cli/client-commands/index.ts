/**
 * The client commands of the `mediagate` bin: `video create`, `image create`,
 * `task get|wait|cancel|list`, `webhooks add|list|remove`, `models`, `usage`, and with an admin
 * key `admin keys list|create|show|set|revoke` and `admin usage`. They talk to a running
 * service through the SDK (src/client), never to its internals.
 */
export { registerVideoCommands } from './video.js';
export { registerImageCommands } from './image.js';
export { registerTaskCommands } from './task.js';
export { registerModelsCommand } from './models.js';
export { registerWebhookCommands } from './webhooks.js';
export { registerUsageCommand } from './usage.js';
export { registerAdminCommands } from './admin.js';
export { EXIT } from './context.js';
