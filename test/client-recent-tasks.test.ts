/**
 * `client.tasks.recent` against a real server (real HTTP, the store, workers, the instant engine):
 * tasks of both families made and awaited with the SDK come back newest first in the shape the
 * route documents, with the fields their own tasks show; `limit` is sent and honoured, a bad one
 * throws before any request; another key sees none of them; a wrong key is the SDK's
 * AuthenticationError; a body of another shape is refused. The types are checked too
 * (expectTypeOf, checked by tsc).
 */
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import {
  APIError,
  AuthenticationError,
  Mediagate,
  MediagateError,
  type Fetch,
  type ImageTask,
  type RecentModel,
  type RecentTask,
  type RecentTasks,
  type TaskUsage,
  type VideoTask,
} from '../src/client/index.js';
import { recentTasksDocs } from '../src/http/routes/recent-tasks-docs.js';
import { rejectsWith } from './helpers/rejections.js';
import { startServer, type TestServer } from './helpers/server.js';

const T2V = 'vendora/famw-2.7-t2v';
const IMAGE = 'vendora/famz-image-spicy';
const FAST = { pollInterval: 50, maxPollInterval: 200 } as const;

let server: TestServer;
let client: Mediagate;
let video: VideoTask;
let image: ImageTask;
const requests: string[] = [];

/** The fields a component of the route's docs requires, sorted. */
function documented(name: 'RecentTask' | 'RecentModel'): string[] {
  const component = recentTasksDocs.components?.[name];
  const required = typeof component === 'object' && component !== null && 'required' in component ? component.required : undefined;
  if (!Array.isArray(required)) throw new Error(`no required fields in ${name}`);
  return required.map(String).sort();
}

/** A signed URL's path: the signature may differ between two answers, the file may not. */
const pathOf = (url: string | null | undefined): string | undefined => (url ? new URL(url).pathname : undefined);

beforeAll(async () => {
  server = await startServer({ MEDIAGATE_ENGINE: 'instant' });
  const counting: Fetch = (url, init) => {
    requests.push(`${init.method ?? 'GET'} ${new URL(url).pathname}${new URL(url).search}`);
    return fetch(url, init);
  };
  client = new Mediagate({ baseURL: server.url, apiKey: server.keys[0], fetch: counting });
  // One after the other, so the image is the newer by its creation time.
  video = await client.videos.createAndWait({ model: T2V, prompt: 'a red fox in snow', duration: 4, resolution: '480p' }, FAST);
  image = await client.images.createAndWait({ model: IMAGE, prompt: 'a lighthouse at dusk', size: '512x768' }, FAST);
}, 60_000);

afterAll(async () => {
  await server?.close();
});

describe('client.tasks.recent', () => {
  it('answers the key’s tasks of both families newest first, with what their own tasks show', async () => {
    const recent = await client.tasks.recent();
    expectTypeOf(recent).toEqualTypeOf<RecentTasks>();
    expectTypeOf(recent.data[0]).toEqualTypeOf<RecentTask | undefined>();
    expectTypeOf(recent.models[0]).toEqualTypeOf<RecentModel | undefined>();
    expectTypeOf<RecentTask['usage']>().toEqualTypeOf<TaskUsage | null>();
    expectTypeOf<RecentTask['duration']>().toEqualTypeOf<number | null>();
    expectTypeOf<RecentTask['output']>().toEqualTypeOf<string | null>();

    expect(recent.object).toBe('list');
    expect(recent.data.map((task) => task.id)).toEqual([image.task_id, video.id]);
    const [newest, oldest] = recent.data;
    for (const task of recent.data) expect(Object.keys(task).sort()).toEqual(documented('RecentTask'));
    expect(oldest).toEqual({
      id: video.id,
      kind: 'video',
      model: T2V,
      model_name: 'FamW 2.7 Text to Video',
      status: 'completed',
      prompt: 'a red fox in snow',
      duration: 4,
      resolution: '480p',
      size: null,
      created_at: video.created_at,
      completed_at: video.completed_at,
      run_ms: expect.any(Number) as number,
      usage: video.usage,
      output: expect.any(String) as string,
    });
    expect(pathOf(oldest?.output)).toBe(pathOf(video.outputs[0]?.url));
    expect(newest).toEqual({
      id: image.task_id,
      kind: 'image',
      model: IMAGE,
      model_name: 'FamZ Image (spicy)',
      status: 'completed',
      prompt: 'a lighthouse at dusk',
      duration: null,
      resolution: null,
      size: '512x768',
      created_at: image.submit_time,
      completed_at: image.finish_time,
      run_ms: expect.any(Number) as number,
      usage: image.usage,
      output: expect.any(String) as string,
    });
    expect(pathOf(newest?.output)).toBe(pathOf(image.outputs[0]));
    for (const task of recent.data) expect(task.run_ms).toBeGreaterThanOrEqual(0);

    for (const model of recent.models) expect(Object.keys(model).sort()).toEqual(documented('RecentModel'));
    expect(recent.models).toEqual([
      {
        model: IMAGE,
        completed: 1,
        median_run_ms: newest?.run_ms,
        example: { task_id: image.task_id, kind: 'image', prompt: 'a lighthouse at dusk', url: newest?.output },
      },
      {
        model: T2V,
        completed: 1,
        median_run_ms: oldest?.run_ms,
        example: { task_id: video.id, kind: 'video', prompt: 'a red fox in snow', url: oldest?.output },
      },
    ]);
  });

  it('sends limit and gets no more than it asked for', async () => {
    const before = requests.length;
    const { data, response } = await client.tasks.recent({ limit: 1 }).withResponse();
    expect(requests.slice(before)).toEqual(['GET /v1/tasks/recent?limit=1']);
    expect(response.status).toBe(200);
    expect(data.data.map((task) => task.id)).toEqual([image.task_id]);
    expect(data.models.map((model) => model.model)).toEqual([IMAGE]);
  });

  it('throws a MediagateError for a limit outside 1-100 or not whole, before any request', () => {
    const before = requests.length;
    for (const limit of [0, 101, 1.5, -3, Number.NaN]) {
      expect(() => client.tasks.recent({ limit })).toThrow(MediagateError);
      expect(() => client.tasks.recent({ limit })).toThrow(`limit must be an integer from 1 to 100; got ${String(limit)}.`);
    }
    expect(requests.length).toBe(before);
  });

  it('shows another key none of these tasks', async () => {
    const other = new Mediagate({ baseURL: server.url, apiKey: server.keys[1] });
    expect(await other.tasks.recent()).toEqual({ object: 'list', data: [], models: [] });
  });

  it('answers a wrong key with the SDK’s AuthenticationError', async () => {
    const stranger = new Mediagate({ baseURL: server.url, apiKey: 'mg_not_a_key_0123456789', maxRetries: 0 });
    const error = await rejectsWith(stranger.tasks.recent(), AuthenticationError);
    expect(error).toMatchObject({ status: 401, code: 'invalid_api_key' });
  });

  it('refuses a body of another shape as an unexpected response', async () => {
    const odd: Fetch = () => Promise.resolve(Response.json({ object: 'list', data: [{ id: 'video_1', kind: 'video' }], models: [] }));
    const confused = new Mediagate({ baseURL: server.url, apiKey: server.keys[0], fetch: odd });
    const error = await rejectsWith(confused.tasks.recent(), APIError);
    expect(error.message).toMatch(/Unexpected response from the server: expected recent tasks/);
  });
});
