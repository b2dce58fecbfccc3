import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CliError, EXIT } from './context.js';

const EXT_BY_TYPE: Readonly<Record<string, string>> = {
  'video/mp4': 'mp4',
  'video/webm': 'webm',
  'video/quicktime': 'mov',
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/webp': 'webp',
  'image/gif': 'gif',
};

/** The extension of the URL's path (`.../abc.mp4?sig=...` -> `mp4`), else of the content type, else `bin`. */
export function extensionFor(url: string, contentType: string | null): string {
  const path = new URL(url).pathname;
  const fromPath = /\.([A-Za-z0-9]{1,5})$/.exec(path)?.[1];
  if (fromPath) return fromPath.toLowerCase();
  const type = contentType?.split(';')[0]?.trim().toLowerCase() ?? '';
  return EXT_BY_TYPE[type] ?? 'bin';
}

/**
 * Saves a task's outputs into `dir` as `<task id>.<ext>` (`<task id>-<n>.<ext>` when there are
 * several), written to a `.part` file first so a half-written file never carries the final name.
 * Output URLs are signed and need no API key.
 */
export async function downloadOutputs(taskId: string, urls: readonly string[], dir: string): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const saved: string[] = [];
  for (const [index, url] of urls.entries()) {
    const response = await fetch(url).catch((error: unknown) => {
      throw new CliError(EXIT.failure, `mediagate: download of ${url} failed: ${error instanceof Error ? error.message : String(error)}`);
    });
    if (!response.ok || !response.body) {
      throw new CliError(EXIT.failure, `mediagate: download of ${url} failed: HTTP ${response.status}.`);
    }
    const name = `${taskId}${urls.length > 1 ? `-${index + 1}` : ''}.${extensionFor(url, response.headers.get('content-type'))}`;
    const path = join(dir, name);
    const part = `${path}.part`;
    try {
      await pipeline(Readable.fromWeb(response.body), createWriteStream(part));
      await rename(part, path);
    } catch (error) {
      await rm(part, { force: true });
      throw new CliError(EXIT.failure, `mediagate: could not save ${path}: ${error instanceof Error ? error.message : String(error)}`);
    }
    saved.push(path);
  }
  return saved;
}
