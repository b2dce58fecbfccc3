import { createHash } from 'node:crypto';
import { link, mkdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The sandbox's output is a pure function of what it draws (size, duration, frame rate,
 * audio, caption, colours, input image bytes), whatever the model or the parameters that do
 * not change pixels. A burst of equivalent requests (a client retrying, a test suite) then
 * costs one encode: finished files are hard-linked into `<dir>/<sha256>.mp4` and linked back
 * out on a hit, so a hit costs no copy and no extra disk. Entries age out with the output TTL
 * sweep; a missing entry is simply a miss. The key material includes the task's owner: an
 * entry serves only the key that rendered it (timing would otherwise leak other keys' prompts).
 */
export class RenderCache {
  constructor(private readonly dir: string) {}

  static key(material: Readonly<Record<string, unknown>>, inputs: readonly (Buffer | undefined)[]): string {
    const hash = createHash('sha256').update(JSON.stringify(material));
    for (const input of inputs) hash.update(input ? createHash('sha256').update(input).digest() : Buffer.alloc(1));
    return hash.digest('hex');
  }

  /** Links a cached render to `target`; false on a miss. */
  async fetch(key: string, ext: string, target: string): Promise<boolean> {
    try {
      await link(join(this.dir, `${key}.${ext}`), target);
      return true;
    } catch {
      return false;
    }
  }

  /** Records a finished render; best effort (another process may have stored it first). */
  async store(key: string, ext: string, source: string): Promise<void> {
    try {
      await mkdir(this.dir, { recursive: true });
      await link(source, join(this.dir, `${key}.${ext}`));
    } catch {
      // EEXIST or a filesystem without hard links: the cache is an optimisation only.
    }
  }

  async drop(key: string, ext: string): Promise<void> {
    await unlink(join(this.dir, `${key}.${ext}`)).catch(() => {});
  }
}
