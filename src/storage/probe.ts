import { randomBytes } from 'node:crypto';
import type { Config } from '../config.js';
import { openMediaStore } from './media-store.js';

export interface ProbeStep {
  readonly step: 'write' | 'read' | 'list' | 'delete';
  readonly ms: number;
}

export interface ProbeResult {
  readonly kind: 'local' | 's3';
  /** Where the objects are: a directory or `s3://bucket/prefix`. */
  readonly where: string;
  readonly steps: readonly ProbeStep[];
}

/**
 * `mediagate storage check`: opens the media store as a process would at start (a fault is the
 * same ConfigError), then writes a probe object under `probes/`, reads it back byte for byte,
 * finds it in a listing, deletes it and checks it is gone. Throws at the first step that fails.
 */
export async function probeMediaStore(config: Pick<Config, 'storage' | 'dataDir'>): Promise<ProbeResult> {
  const blobs = await openMediaStore(config);
  const steps: ProbeStep[] = [];
  const timed = async <T>(step: ProbeStep['step'], run: () => Promise<T>): Promise<T> => {
    const started = Date.now();
    const value = await run();
    steps.push({ step, ms: Date.now() - started });
    return value;
  };
  const key = `probes/${randomBytes(12).toString('base64url')}`;
  const bytes = randomBytes(64 * 1024);
  try {
    await timed('write', () => blobs.putBytes(key, bytes, 'application/octet-stream'));
    const back = await timed('read', () => blobs.read(key));
    if (!back?.equals(bytes)) throw new Error(`the probe object ${key} read back ${back === undefined ? 'nothing' : `${back.length} different bytes`}`);
    const listed = await timed('list', async () => {
      for await (const entry of blobs.list('probes/')) if (entry.key === key) return true;
      return false;
    });
    if (!listed) throw new Error(`the probe object ${key} is missing from the listing of probes/`);
    await timed('delete', () => blobs.delete(key));
    if ((await blobs.open(key)) !== undefined) throw new Error(`the probe object ${key} is still there after its delete`);
    return { kind: blobs.kind, where: blobs.where, steps };
  } finally {
    await blobs.delete(key).catch(() => {});
    await blobs.close();
  }
}
