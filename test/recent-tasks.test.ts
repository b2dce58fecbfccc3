import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { median } from '../src/http/routes/recent-tasks.js';
import { eventually } from './helpers/eventually.js';
import { startServer, type TestServer } from './helpers/server.js';

/**
 * `GET /v1/tasks/recent` on a real server (the instant engine): the key's tasks of both families
 * newest first with their prompts and asked sizes, per model the median run time and the newest
 * output; another key sees none of them; a bad limit is refused.
 */

interface Recent {
  data: {
    id: string;
    kind: string;
    model: string;
    model_name: string;
    status: string;
    prompt: string;
    duration: number | null;
    resolution: string | null;
    size: string | null;
    run_ms: number | null;
    output: string | null;
  }[];
  models: { model: string; completed: number; median_run_ms: number | null; example: { task_id: string; url: string; prompt: string } | null }[];
}

const T2V = 'vendora/famw-2.7-t2v';
const IMAGE = 'vendora/famz-image-spicy';

let server: TestServer;
const headers = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });
const recent = async (key: string, query = ''): Promise<Response> => fetch(`${server.url}/v1/tasks/recent${query}`, { headers: headers(key) });

beforeAll(async () => {
  server = await startServer({ MEDIAGATE_ENGINE: 'instant' });
  const key = server.keys[0];
  for (const prompt of ['a red fox in snow', 'a lighthouse at dusk']) {
    const res = await fetch(`${server.url}/v1/video/generations`, {
      method: 'POST',
      headers: headers(key),
      body: JSON.stringify({ model: T2V, prompt, duration: 3 }),
    });
    expect(res.status).toBe(200);
  }
  const image = await fetch(`${server.url}/v1/images/generations/async`, {
    method: 'POST',
    headers: headers(key),
    body: JSON.stringify({ model: IMAGE, prompt: 'x'.repeat(400), size: '512x768' }),
  });
  expect(image.status).toBe(200);
  await eventually(
    async () => {
      const body = (await (await recent(key)).json()) as Recent;
      return body.data.length === 3 && body.data.every((task) => task.status === 'completed');
    },
    { deadline: 30_000, interval: 100, what: 'three completed tasks' },
  );
});
afterAll(async () => server?.close());

describe('GET /v1/tasks/recent', () => {
  it('lists both families newest first with prompt, model name and what was asked', async () => {
    const body = (await (await recent(server.keys[0])).json()) as Recent;
    expect(body.data.map((task) => task.kind)).toEqual(['image', 'video', 'video']);
    const [image, second, first] = body.data;
    expect(first).toMatchObject({ model: T2V, model_name: 'FamW 2.7 Text to Video', prompt: 'a red fox in snow', duration: 3, resolution: '720p', size: null });
    expect(second?.prompt).toBe('a lighthouse at dusk');
    expect(image).toMatchObject({ model: IMAGE, model_name: 'FamZ Image (spicy)', duration: null, size: '512x768' });
    expect([...(image?.prompt ?? '')]).toHaveLength(300);
    expect(image?.prompt.endsWith('…')).toBe(true);
    for (const task of body.data) {
      expect(task.run_ms).toBeGreaterThanOrEqual(0);
      expect(task.output).toMatch(/^http:\/\/.+\/files\//);
    }
  });

  it('per model: completed count, median run time, the newest output as the example', async () => {
    const body = (await (await recent(server.keys[0])).json()) as Recent;
    const video = body.models.find((entry) => entry.model === T2V);
    const runs = body.data.filter((task) => task.model === T2V).map((task) => task.run_ms ?? 0);
    expect(video).toMatchObject({ completed: 2, median_run_ms: median(runs) });
    expect(video?.example).toMatchObject({ task_id: body.data[1]?.id, prompt: 'a lighthouse at dusk', url: body.data[1]?.output });
    expect((await fetch(video?.example?.url ?? '')).status).toBe(200);
  });

  it('limit cuts the list; another key sees none of them; a bad limit is 400 with param limit', async () => {
    expect(((await (await recent(server.keys[0], '?limit=1')).json()) as Recent).data).toHaveLength(1);
    expect(await (await recent(server.keys[1])).json()).toEqual({ object: 'list', data: [], models: [] });
    const bad = await recent(server.keys[0], '?limit=0');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { param: 'limit' } });
  });

  it('/openapi.json describes the operation and the models’ display_name, family, summary and description', async () => {
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { operationId?: string }>>;
      components: { schemas: Record<string, { required?: string[]; properties?: Record<string, unknown> }> };
    };
    expect(doc.paths['/v1/tasks/recent']?.['get']?.operationId).toBe('listRecentTasks');
    expect(doc.components.schemas['RecentTask']?.required).toContain('prompt');
    expect(doc.components.schemas['Model']?.required).toEqual(expect.arrayContaining(['display_name', 'family', 'summary', 'description']));
  });

  it('median: the middle value, or the mean of the two middle ones', () => {
    expect(median([])).toBeNull();
    expect(median([5, 1, 9])).toBe(5);
    expect(median([4, 1, 9, 2])).toBe(3);
  });
});
