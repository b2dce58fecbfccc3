/**
 * Type-level tests of the task operations: list pages and their items, event streams, cancel,
 * idempotency options and `withResponse`, webhooks and receivers' verification, the new errors.
 * Each `@ts-expect-error` line must fail to compile (test/types/typecheck.test.ts checks this file).
 * Nothing here talks to a server: the calls are typed, never awaited at run time.
 */
import { describe, expectTypeOf, it } from 'vitest';
import {
  APIPromise,
  ConflictError,
  Mediagate,
  Page,
  UnprocessableEntityError,
  ValidationError,
  WebhookVerificationError,
  unwrapWebhook,
  verifyWebhook,
  type ImageTask,
  type ImageTaskCreated,
  type ResponseInfo,
  type TaskEventStream,
  type VideoTask,
  type WebhookEndpoint,
  type WebhookEndpointCreated,
  type WebhookEvent,
  type WithResponse,
} from '../../src/client/index.js';

/** Never called: its body is only type-checked. */
function typed(client: Mediagate): void {
  expectTypeOf(client.videos.list()).toEqualTypeOf<Promise<Page<VideoTask>>>();
  expectTypeOf(client.images.list({ status: 'IN_PROGRESS', limit: 5, after: 'img_1', model: 'm' })).toEqualTypeOf<Promise<Page<ImageTask>>>();
  void client.videos.list({ status: 'processing' });
  // @ts-expect-error the image family's words are not video statuses
  void client.videos.list({ status: 'IN_PROGRESS' });
  // @ts-expect-error and the video family's words are not image statuses
  void client.images.list({ status: 'completed' });
  // @ts-expect-error limit is a number
  void client.videos.list({ limit: '20' });

  expectTypeOf(client.videos.cancel('vid_1')).toEqualTypeOf<APIPromise<VideoTask>>();
  expectTypeOf(client.images.cancel('img_1')).toEqualTypeOf<APIPromise<ImageTask>>();
  expectTypeOf(client.videos.events('vid_1', { lastEventId: '3' })).toEqualTypeOf<TaskEventStream<VideoTask>>();
  expectTypeOf(client.images.events('img_1')).toMatchTypeOf<AsyncIterable<ImageTask>>();
  expectTypeOf(client.videos.events('vid_1').lastEventId).toEqualTypeOf<string>();

  const created = client.videos.create({ model: 'vendora/famw-2.7-t2v', prompt: 'a fox' }, { idempotencyKey: 'order-1' });
  expectTypeOf(created).toMatchTypeOf<Promise<VideoTask>>();
  expectTypeOf(created.withResponse()).toEqualTypeOf<Promise<WithResponse<VideoTask>>>();
  expectTypeOf<ResponseInfo['idempotentReplayed']>().toEqualTypeOf<boolean>();
  expectTypeOf(client.images.create({ model: 'vendora/famz-image-spicy-pro', prompt: 'x' }, { idempotencyKey: 'k' })).toMatchTypeOf<
    Promise<ImageTaskCreated>
  >();
  // @ts-expect-error the key is a string
  void client.videos.create({ model: 'vendora/famw-2.7-t2v', prompt: 'a fox' }, { idempotencyKey: 7 });
  void client.videos.createAndWait({ model: 'vendora/famw-2.7-t2v', prompt: 'a fox' }, { idempotencyKey: 'k', events: false });
  // @ts-expect-error an idempotency key belongs to creates, not reads
  void client.videos.get('vid_1', { idempotencyKey: 'k' });

  expectTypeOf(client.webhooks.create({ url: 'https://x.test/hook', events: ['video.completed'] })).toMatchTypeOf<Promise<WebhookEndpointCreated>>();
  expectTypeOf(client.webhooks.list()).toMatchTypeOf<Promise<WebhookEndpoint[]>>();
  expectTypeOf(client.webhooks.delete('wh_1')).toMatchTypeOf<Promise<void>>();
  // @ts-expect-error not one of the six events
  void client.webhooks.create({ url: 'https://x.test/hook', events: ['video.started'] });
}

describe('task operation types', () => {
  it('types list pages, cancels, events, idempotent creates and webhooks (checked by the compiler)', () => {
    expectTypeOf(typed).parameter(0).toEqualTypeOf<Mediagate>();
  });

  it('narrows a webhook event by its type', () => {
    const handle = (event: WebhookEvent): string => {
      if (event.type === 'video.completed') {
        expectTypeOf(event.data).toEqualTypeOf<VideoTask>();
        return event.data.id;
      }
      if (event.type === 'image.failed') {
        expectTypeOf(event.data.data).toEqualTypeOf<ImageTask>();
        return event.data.data.fail_reason;
      }
      return event.type;
    };
    expectTypeOf(handle).returns.toEqualTypeOf<string>();
    expectTypeOf(verifyWebhook).returns.toEqualTypeOf<void>();
    expectTypeOf(unwrapWebhook).returns.toEqualTypeOf<WebhookEvent>();
    expectTypeOf<WebhookVerificationError['code']>().toMatchTypeOf<string>();
  });

  it('places the new errors in the hierarchy', () => {
    expectTypeOf<UnprocessableEntityError>().toMatchTypeOf<ValidationError>();
    expectTypeOf<ConflictError['code']>().toEqualTypeOf<string>();
  });
});
