/**
 * The groups of /openapi.json, in the order a newcomer needs them: make a video, poll it, then
 * images and the models to choose from; what follows a task (cancel, list, events) after that;
 * then webhooks, usage, the OpenAI-compatible doors and the admin API. The renderer shows the
 * groups in this order, so the order lives here, in the document, not in the page.
 */

export interface Tag {
  readonly name: string;
  readonly description: string;
}

export const TAGS: readonly Tag[] = [
  { name: 'Videos', description: 'Create a video generation task, then poll it until it carries output URLs.' },
  { name: 'Images', description: 'Create an image generation task, then poll it until it carries output URLs.' },
  { name: 'Models', description: "The models this deployment offers, each with its request body's JSON Schema (and price, when a pricing file is set)." },
  { name: 'Tasks', description: 'What follows a create: cancel a task, list the tasks of the key, follow a task live (server-sent events).' },
  { name: 'Webhooks', description: 'Have a final task posted to a URL of yours instead of polling.' },
  { name: 'Usage', description: "What the key's tasks cost, per day and model." },
  { name: 'OpenAI-compatible', description: "OpenAI's video and image endpoints, for clients written against them (docs/guides/openai-clients.md)." },
  { name: 'Admin', description: 'API keys, their budgets and limits, and usage across keys: admin keys only (docs/admin.md).' },
];

/** The tag of an operation the route table's row did not tag itself, from its path and method. */
export function tagOf(path: string, method: string): string {
  if (path.startsWith('/v1/admin/')) return 'Admin';
  if (path.startsWith('/v1/webhooks')) return 'Webhooks';
  if (path.startsWith('/v1/usage')) return 'Usage';
  if (path.startsWith('/v1/models')) return 'Models';
  const create = method === 'post' && (path === '/v1/video/generations' || path === '/v1/images/generations/async');
  const poll = method === 'get' && /^\/v1\/(video\/generations|images\/generations\/async)\/\{task_id\}$/.test(path);
  if (create || poll) return path.startsWith('/v1/video/') ? 'Videos' : 'Images';
  return 'Tasks';
}
