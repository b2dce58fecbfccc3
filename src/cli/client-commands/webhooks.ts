import { InvalidArgumentError, type Command } from 'commander';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../../client/index.js';
import { action, addConnectionOptions, makeClient, usageExit, type ConnectionFlags } from './context.js';
import { table } from './models.js';

interface WebhookFlags extends ConnectionFlags {
  readonly events?: readonly WebhookEventType[];
  readonly json?: boolean;
}

/** `--events video.completed,image.failed`: each one of the six. */
function eventList(value: string): WebhookEventType[] {
  const events = value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  const known = new Set<string>(WEBHOOK_EVENT_TYPES);
  const unknown = events.filter((item) => !known.has(item));
  if (events.length === 0 || unknown.length > 0) throw new InvalidArgumentError(`one or more of ${WEBHOOK_EVENT_TYPES.join(', ')}.`);
  return WEBHOOK_EVENT_TYPES.filter((item) => events.includes(item));
}

/** `mediagate webhooks add|list|remove`: the calling key's webhook endpoints. */
export function registerWebhookCommands(program: Command): void {
  const group = program.command('webhooks').description('manage webhook endpoints (signed POSTs when tasks complete, fail or are cancelled)');
  group.exitOverride(usageExit);

  addConnectionOptions(
    group.command('add').argument('<url>', 'an https:// URL the service can reach').description('register an endpoint; prints its signing secret once'),
  )
    .option('--events <list>', `comma-separated, default all: ${WEBHOOK_EVENT_TYPES.join(',')}`, eventList)
    .option('--json', 'print the endpoint with its secret as JSON')
    .exitOverride(usageExit)
    .action(
      action(async (url: string, flags: WebhookFlags) => {
        const endpoint = await makeClient(flags).webhooks.create({ url, ...(flags.events ? { events: flags.events } : {}) });
        if (flags.json) {
          process.stdout.write(`${JSON.stringify(endpoint, null, 2)}\n`);
          return;
        }
        process.stdout.write(`${endpoint.secret}\n`);
        process.stderr.write(
          `Registered ${endpoint.id} for ${endpoint.events.join(', ')} at ${endpoint.url}.\n` +
            'The line above is its signing secret, shown only now: store it where the receiver can read it.\n',
        );
      }),
    );

  addConnectionOptions(group.command('list').description('list the endpoints (secrets are never shown again)'))
    .option('--json', 'print the endpoints as JSON')
    .exitOverride(usageExit)
    .action(
      action(async (flags: WebhookFlags) => {
        const endpoints = await makeClient(flags).webhooks.list();
        if (flags.json) {
          process.stdout.write(`${JSON.stringify(endpoints, null, 2)}\n`);
          return;
        }
        const rows = [['ID', 'URL', 'EVENTS'], ...endpoints.map((endpoint) => [endpoint.id, endpoint.url, endpoint.events.join(',')])];
        process.stdout.write(endpoints.length === 0 ? 'No webhook endpoints.\n' : `${table(rows)}\n`);
      }),
    );

  addConnectionOptions(group.command('remove').argument('<id>', 'endpoint id').description('remove an endpoint'))
    .option('--json', 'print {"id", "deleted": true}')
    .exitOverride(usageExit)
    .action(
      action(async (id: string, flags: WebhookFlags) => {
        await makeClient(flags).webhooks.delete(id);
        process.stdout.write(flags.json ? `${JSON.stringify({ id, deleted: true })}\n` : `Removed ${id}.\n`);
      }),
    );
}
