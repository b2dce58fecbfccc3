/**
 * The per-model example requests of the create operations in /openapi.json (the ones /docs
 * lists and its "Try it out" sends): each one is accepted as it stands by a real server, so a
 * newcomer who picks any model in the reference and presses Execute gets a task, not a 400.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInstantEngine } from '../src/engines/instant.js';
import { startServer, type TestServer } from './helpers/server.js';

type Examples = Record<string, { summary: string; value: Record<string, unknown> }>;
type Document = { paths: Record<string, { post?: { requestBody: { content: { 'application/json': { examples: Examples } } } } }> };

describe('/openapi.json: every model example of the creates', () => {
  let server: TestServer;
  let document: Document;
  beforeAll(async () => {
    server = await startServer({}, { engine: createInstantEngine() });
    document = (await (await fetch(`${server.url}/openapi.json`)).json()) as Document;
  });
  afterAll(async () => server?.close());

  it.each(['/v1/video/generations', '/v1/images/generations/async'])('%s: each example is accepted as it stands', async (path) => {
    const examples = document.paths[path]?.post?.requestBody.content['application/json'].examples ?? {};
    expect(Object.keys(examples).length).toBeGreaterThan(0);
    for (const [model, example] of Object.entries(examples)) {
      expect(example.value['model']).toBe(model);
      expect(example.summary.startsWith(`${model}: `)).toBe(true);
      const reply = await fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.keys[0]}`, 'content-type': 'application/json' },
        body: JSON.stringify(example.value),
      });
      expect(reply.status, `${model}: ${await reply.clone().text()}`).toBe(200);
      await reply.arrayBuffer();
    }
  });
});
