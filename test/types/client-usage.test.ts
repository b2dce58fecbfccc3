/**
 * Type-level tests of usage, budgets and key administration: usage on task bodies, the usage
 * report's rows typed by their grouping, the admin client's keys and report, and the errors of
 * each. Each `@ts-expect-error` line must fail to compile (test/types/typecheck.test.ts checks
 * this file). Nothing here talks to a server: the calls are typed, never awaited at run time.
 */
import { describe, expectTypeOf, it } from 'vitest';
import {
  APIError,
  APIPromise,
  BudgetExceededError,
  KeyNotFoundError,
  Mediagate,
  MediagateAdmin,
  NotFoundError,
  Page,
  PermissionDeniedError,
  type AdminKey,
  type AdminKeyCreated,
  type AdminUsageReport,
  type ImageTask,
  type TaskUsage,
  type UsageReport,
  type VideoTask,
} from '../../src/client/index.js';

/** Never called: its body is only type-checked. */
function typedClient(client: Mediagate): void {
  expectTypeOf<VideoTask['usage']>().toEqualTypeOf<TaskUsage | null>();
  expectTypeOf<ImageTask['usage']>().toEqualTypeOf<TaskUsage | null>();
  expectTypeOf<TaskUsage>().toEqualTypeOf<{ readonly seconds: number; readonly images: number; readonly cost: number; readonly currency: string }>();

  expectTypeOf(client.usage.retrieve()).toEqualTypeOf<APIPromise<UsageReport>>();
  expectTypeOf(client.usage.retrieve({ start: new Date(), end: 1_764_000_000 })).toEqualTypeOf<APIPromise<UsageReport>>();
  expectTypeOf(client.usage.retrieve({ groupBy: 'model' })).toEqualTypeOf<APIPromise<UsageReport<'model'>>>();
  expectTypeOf(client.usage.retrieve({ groupBy: ['model', 'day'] })).toEqualTypeOf<APIPromise<UsageReport<'model' | 'day'>>>();
  expectTypeOf<UsageReport<'model'>['data'][number]['model']>().toEqualTypeOf<string>();
  expectTypeOf<UsageReport<'model'>['data'][number]['day']>().toEqualTypeOf<null>();
  expectTypeOf<UsageReport<'day'>['data'][number]['model']>().toEqualTypeOf<null>();
  expectTypeOf<UsageReport['data'][number]['day']>().toEqualTypeOf<string>();
  expectTypeOf<UsageReport['budget']['budget']>().toEqualTypeOf<number | null>();
  expectTypeOf<UsageReport['budget']['budget_period']>().toEqualTypeOf<'day' | 'month' | null>();
  expectTypeOf<UsageReport['budget']['resets_at']>().toEqualTypeOf<number | null>();
  // @ts-expect-error `key` groups the admin report only
  void client.usage.retrieve({ groupBy: 'key' });
  // @ts-expect-error times are unix seconds or a Date, not text
  void client.usage.retrieve({ start: '2026-11-01' });
  // @ts-expect-error the client has no admin API
  void client.keys;
}

function typedAdmin(admin: MediagateAdmin): void {
  expectTypeOf(admin.keys.create({ name: 'team a' })).toEqualTypeOf<APIPromise<AdminKeyCreated>>();
  expectTypeOf<AdminKeyCreated['key']>().toEqualTypeOf<string>();
  expectTypeOf(admin.keys.list({ limit: 10, after: 'key_1' })).toEqualTypeOf<Promise<Page<AdminKey>>>();
  expectTypeOf(admin.keys.retrieve('key_1')).toEqualTypeOf<APIPromise<AdminKey>>();
  expectTypeOf(admin.keys.update('key_1', { budget: null, models: ['vendora/*'], disabled: true })).toEqualTypeOf<APIPromise<AdminKey>>();
  expectTypeOf(admin.keys.delete('key_1')).toEqualTypeOf<APIPromise<void>>();
  expectTypeOf<AdminKey['models']>().toEqualTypeOf<readonly string[] | null>();
  expectTypeOf<AdminKey['spent']>().toEqualTypeOf<number>();
  void admin.keys.create({ name: 'b', budget: 12.5, budget_period: 'day', models: null, rate_limit_per_min: 60, max_tasks_in_flight: null });
  // @ts-expect-error a key needs a name
  void admin.keys.create({ budget: 5 });
  // @ts-expect-error periods are day, month or null (lifetime)
  void admin.keys.create({ name: 'c', budget_period: 'week' });
  // @ts-expect-error a key is made enabled; `disabled` is a change
  void admin.keys.create({ name: 'd', disabled: true });
  // @ts-expect-error the budget is an amount
  void admin.keys.update('key_1', { budget: '5' });

  expectTypeOf(admin.usage.retrieve()).toEqualTypeOf<APIPromise<AdminUsageReport>>();
  expectTypeOf(admin.usage.retrieve({ groupBy: 'key', keyId: 'key_1' })).toEqualTypeOf<APIPromise<AdminUsageReport<'key'>>>();
  expectTypeOf<AdminUsageReport<'key'>['data'][number]['key_id']>().toEqualTypeOf<string>();
  expectTypeOf<AdminUsageReport<'key'>['data'][number]['model']>().toEqualTypeOf<null>();
  expectTypeOf<AdminUsageReport['data'][number]['key_id']>().toEqualTypeOf<string>();
  // @ts-expect-error the admin report has no budget: each key has its own
  void ({} as AdminUsageReport).budget;
  // @ts-expect-error the admin client does not generate
  void admin.videos;
}

describe('usage and key administration types', () => {
  it('types usage on tasks and the usage report by its grouping (checked by the compiler)', () => {
    expectTypeOf(typedClient).parameter(0).toEqualTypeOf<Mediagate>();
  });

  it('types the admin client’s keys and report (checked by the compiler)', () => {
    expectTypeOf(typedAdmin).parameter(0).toEqualTypeOf<MediagateAdmin>();
  });

  it('places the new errors in the hierarchy', () => {
    expectTypeOf<BudgetExceededError>().toMatchTypeOf<APIError>();
    expectTypeOf<PermissionDeniedError>().toMatchTypeOf<APIError>();
    expectTypeOf<KeyNotFoundError>().toMatchTypeOf<NotFoundError>();
  });
});
