import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSandboxEngine } from '../../src/engines/sandbox/engine.js';
import { defaultFfmpegPath } from '../../src/engines/sandbox/ffmpeg-path.js';

export interface RenderFigure {
  readonly name: string;
  readonly wallMs: number;
  /** Seconds of video per second of wall time (videos only). */
  readonly realtime: number | null;
}

const CASES = [
  { name: 'video 5 s 480p', kind: 'video', params: { duration: 5, resolution: '480p' } },
  { name: 'video 5 s 720p', kind: 'video', params: { duration: 5, resolution: '720p' } },
  { name: 'video 5 s 1080p', kind: 'video', params: { duration: 5, resolution: '1080p' } },
  { name: 'video 30 s 720p', kind: 'video', params: { duration: 30, resolution: '720p' } },
  { name: 'image 1024x1536', kind: 'image', params: { width: 1024, height: 1536 } },
  { name: 'image 2560x2560', kind: 'image', params: { width: 2560, height: 2560 } },
] as const;

/** Wall time of sandbox renders, best of `repeat` (the machine is shared; the best run is the cost). */
export async function measureRenders(repeat: number, ffmpegPath = defaultFfmpegPath()): Promise<RenderFigure[]> {
  const engine = createSandboxEngine({ ffmpegPath });
  const root = await mkdtemp(join(tmpdir(), 'mediagate-bench-render-'));
  const figures: RenderFigure[] = [];
  try {
    for (const item of CASES) {
      let best = Number.POSITIVE_INFINITY;
      for (let i = 0; i < repeat; i += 1) {
        const workDir = join(root, `${figures.length}-${i}`);
        await import('node:fs/promises').then((fs) => fs.mkdir(workDir, { recursive: true }));
        const started = performance.now();
        await engine.render({
          taskId: `bench${i}`,
          owner: 'bench',
          model: { id: 'bench', kind: item.kind, aspectRatios: [], checkImageRule3: false },
          params: { prompt: 'a benchmark of the sandbox engine', ...item.params },
          workDir,
          signal: new AbortController().signal,
          onProgress: () => {},
        });
        best = Math.min(best, performance.now() - started);
      }
      const duration = 'duration' in item.params ? item.params.duration : null;
      figures.push({ name: item.name, wallMs: Math.round(best), realtime: duration === null ? null : Math.round((duration / (best / 1000)) * 10) / 10 });
    }
  } finally {
    await engine.close();
    await rm(root, { recursive: true, force: true });
  }
  return figures;
}
