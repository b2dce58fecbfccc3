import { InvalidArgumentError, type Command } from 'commander';
import { WEBHOOK_EVENT_TYPES, type Mediagate, type WebhookDelivery, type WebhookEventType } from '../../client/index.js';
import { action, addConnectionOptions, makeClient, positiveIntegerArg, usageExit, type ConnectionFlags } from './context.js';
import { table } from './models.js';

interface WebhookFlags extends ConnectionFlags {
  readonly events?: readonly WebhookEventType[];
  readonly json?: boolean;
}

interface DeliveryFlags extends ConnectionFlags {
  readonly limit?: number;
  readonly all?: boolean;
  readonly json?: boolean;
}

const when = (seconds: number | null): string => (seconds === null ? '-' : new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z'));

/** What the last attempt got: `HTTP 500`, `timeout: ...`, `network: ...`, or `-` before any. */
const lastResult = (delivery: WebhookDelivery): string =>
  delivery.last_error ?? (delivery.last_status_code === null ? '-' : `HTTP ${delivery.last_status_code}`);

/** An aligned table of deliveries: ID, EVENT, TASK, STATUS, ATTEMPTS, LAST, NEXT, CREATED. */
function deliveryTable(deliveries: readonly WebhookDelivery[]): string {
  const rows = [['ID', 'EVENT', 'TASK', 'STATUS', 'ATTEMPTS', 'LAST', 'NEXT', 'CREATED']];
  for (const d of deliveries) rows.push([d.id, d.type, d.task_id, d.status, String(d.attempts), lastResult(d), when(d.next_attempt_at), when(d.created_at)]);
  return table(rows);
}

/** The newest `limit` deliveries (the server's default page), or with `all` every one, page after page. */
async function listDeliveries(client: Mediagate, id: string, flags: DeliveryFlags): Promise<WebhookDelivery[]> {
  const page = await client.webhooks.deliveries(id, flags.all ? { limit: 100 } : flags.limit !== undefined ? { limit: Math.min(flags.limit, 100) } : {});
  if (!flags.all) return [...page.data];
  const every: WebhookDelivery[] = [];
  for await (const delivery of page) every.push(delivery);
  return every;
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

/** `mediagate webhooks add|list|remove|deliveries|redeliver`: the calling key's webhook endpoints and their delivery logs. */
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

  addConnectionOptions(
    group.command('deliveries').argument('<id>', 'endpoint id').description("an endpoint's delivery log, newest first, with each delivery's last result"),
  )
    .option('--limit <n>', 'how many (default 20, at most 100)', positiveIntegerArg)
    .option('--all', 'every delivery, page after page')
    .option('--json', 'print the deliveries, each with its attempt log, as a JSON array')
    .exitOverride(usageExit)
    .action(
      action(async (id: string, flags: DeliveryFlags) => {
        const deliveries = await listDeliveries(makeClient(flags), id, flags);
        if (flags.json) process.stdout.write(`${JSON.stringify(deliveries, null, 2)}\n`);
        else process.stdout.write(deliveries.length === 0 ? 'No deliveries.\n' : `${deliveryTable(deliveries)}\n`);
      }),
    );

  addConnectionOptions(
    group
      .command('redeliver')
      .argument('<id>', 'endpoint id')
      .argument('<delivery_id>', 'delivery id (from `webhooks deliveries`)')
      .description('send a delivery again now, with the same webhook-id (receivers that deduplicate see it once)'),
  )
    .option('--json', 'print the delivery as JSON')
    .exitOverride(usageExit)
    .action(
      action(async (id: string, deliveryId: string, flags: DeliveryFlags) => {
        const delivery = await makeClient(flags).webhooks.redeliver(id, deliveryId);
        process.stdout.write(
          flags.json
            ? `${JSON.stringify(delivery, null, 2)}\n`
            : `Redelivering ${delivery.id} (${delivery.type} of ${delivery.task_id}): ${delivery.status}.\n`,
        );
      }),
    );
}
