import type { ModelInfo } from './api.js';

/** The curl command and SDK call equivalent to a request, with data URLs shortened for display only. */

const DATA_URL = /"data:([^;",]*)[^"]*"/g;

export const shortenDataUrls = (text: string): string =>
  text.replace(DATA_URL, (match, mime: string) => `"data:${mime};base64,…(${match.length - 2} characters)"`);

const shellQuote = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;

/** `origin`: the server the console talks to (the page's own origin), so the command runs as it is. */
export function curlSnippet(model: ModelInfo, json: string, origin: string): string {
  return [
    `curl -s "${origin}${model.endpoint}" \\`,
    `  -H "Authorization: Bearer $MEDIAGATE_API_KEY" \\`,
    `  -H "Content-Type: application/json" \\`,
    `  -d ${shellQuote(json)}`,
  ].join('\n');
}

export function sdkSnippet(model: ModelInfo, body: Record<string, unknown>, origin: string): string {
  const family = model.kind === 'video' ? 'videos' : 'images';
  return [
    `import { Mediagate } from 'mediagate/client';`,
    ``,
    `const client = new Mediagate({ baseURL: ${JSON.stringify(origin)} }); // the key from MEDIAGATE_API_KEY`,
    `const task = await client.${family}.createAndWait(${JSON.stringify(body, null, 2)});`,
    model.kind === 'video' ? `console.log(task.outputs[0]?.url);` : `console.log(task.outputs[0]);`,
  ].join('\n');
}
