import type { ModelInfo } from './api.js';

/** The curl command and SDK call equivalent to a request, with data URLs shortened for display only. */

const DATA_URL = /"data:([^;",]*)[^"]*"/g;

export const shortenDataUrls = (text: string): string =>
  text.replace(DATA_URL, (match, mime: string) => `"data:${mime};base64,…(${match.length - 2} characters)"`);

const shellQuote = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;

export function curlSnippet(model: ModelInfo, json: string): string {
  return [
    `curl -s "$MEDIAGATE_BASE_URL${model.endpoint}" \\`,
    `  -H "Authorization: Bearer $MEDIAGATE_API_KEY" \\`,
    `  -H "Content-Type: application/json" \\`,
    `  -d ${shellQuote(json)}`,
  ].join('\n');
}

export function sdkSnippet(model: ModelInfo, body: Record<string, unknown>): string {
  const family = model.kind === 'video' ? 'videos' : 'images';
  return [
    `import { Mediagate } from 'mediagate/client';`,
    ``,
    `const client = new Mediagate(); // MEDIAGATE_BASE_URL, MEDIAGATE_API_KEY`,
    `const task = await client.${family}.createAndWait(${JSON.stringify(body, null, 2)});`,
    model.kind === 'video' ? `console.log(task.outputs[0]?.url);` : `console.log(task.outputs[0]);`,
  ].join('\n');
}
