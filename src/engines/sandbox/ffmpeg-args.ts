/**
 * The ffmpeg command line of a sandbox video, as a pure function of the plan.
 *
 * Security: ffmpeg (a 2018 build) reads only raw frames this engine wrote (forced `rawvideo`
 * demuxer, `file:` protocol only) and lavfi sources; user media never reaches it.
 *
 * Speed: every still is decoded and converted to YUV once, then repeated by the `loop` filter
 * (no per-frame PNG decode); the crossfade touches only its own window of frames; the rest of
 * each frame is static, so x264 codes it as skipped blocks.
 */

export interface CaptionInput {
  readonly path: string;
  readonly width: number;
  readonly height: number;
  readonly left: number;
  readonly top: number;
}

export interface VideoPlan {
  readonly width: number;
  readonly height: number;
  readonly fps: number;
  readonly durationS: number;
  /** Raw RGB24 frame of width x height: the first frame. */
  readonly startFrame: string;
  /** Raw RGB24 frame of width x height: the last frame; absent -> the start frame throughout. */
  readonly endFrame: string | undefined;
  /** Raw RGBA caption strip, shown on every frame but the first and the last. */
  readonly caption: CaptionInput;
  /** Colour of the moving box, `rrggbb`. */
  readonly accent: string;
  /** Frequency of the audio tone; null for no audio track. */
  readonly toneHz: number | null;
  readonly output: string;
}

export function frameCount(durationS: number, fps: number): number {
  return Math.max(3, Math.round(durationS * fps));
}

/**
 * Frames of the three parts of a start -> end video: hold the start, crossfade, hold the end.
 * The crossfade lasts up to one second in the middle; both holds keep at least one frame, so
 * the first frame is exactly the start image and the last exactly the end image.
 */
export function crossfadeParts(frames: number, fps: number): { head: number; fade: number; tail: number } {
  const fade = Math.max(1, Math.min(fps, frames - 2));
  const head = Math.max(1, Math.floor((frames - fade) / 2));
  return { head, fade, tail: frames - head - fade };
}

function rawInput(path: string, pixelFormat: 'rgb24' | 'rgba', width: number, height: number, fps: number): string[] {
  return [
    '-protocol_whitelist',
    'file',
    '-f',
    'rawvideo',
    '-pixel_format',
    pixelFormat,
    '-video_size',
    `${width}x${height}`,
    '-framerate',
    String(fps),
    '-i',
    `file:${path}`,
  ];
}

/** Repeats a single still `count` times at the output rate. */
function hold(count: number, fps: number): string {
  return `loop=loop=${count - 1}:size=1:start=0,setpts=N/(${fps}*TB)`;
}

export function buildVideoArgs(plan: VideoPlan): string[] {
  const { width, height, fps } = plan;
  const frames = frameCount(plan.durationS, fps);
  /** Time of the last frame, and half a frame: margins that keep comparisons off frame edges. */
  const lastT = (frames - 1) / fps;
  const half = 0.5 / fps;
  const inputs: string[] = [];
  let next = 0;
  const addInput = (args: string[]): number => {
    inputs.push(...args);
    return next++;
  };

  const start = addInput(rawInput(plan.startFrame, 'rgb24', width, height, fps));
  const end = plan.endFrame === undefined ? null : addInput(rawInput(plan.endFrame, 'rgb24', width, height, fps));
  const caption = addInput(rawInput(plan.caption.path, 'rgba', plan.caption.width, plan.caption.height, fps));
  const boxSide = Math.max(2, Math.round(Math.min(width, height) / 16) * 2);
  const box = addInput(['-f', 'lavfi', '-i', `color=c=0x${plan.accent}:s=${boxSide}x${boxSide}:r=${fps}`]);
  const audio = plan.toneHz === null ? null : addInput(['-f', 'lavfi', '-i', `sine=frequency=${plan.toneHz}:sample_rate=48000:duration=${plan.durationS}`]);

  const graph: string[] = [];
  if (end === null) {
    graph.push(`[${start}:v]format=yuv420p,${hold(frames, fps)}[bg]`);
  } else {
    const { head, fade, tail } = crossfadeParts(frames, fps);
    graph.push(
      `[${start}:v]format=yuv420p,split=2[s1][s2]`,
      `[${end}:v]format=yuv420p,split=2[e1][e2]`,
      `[s1]${hold(head, fps)}[head]`,
      `[s2]${hold(fade, fps)}[under]`,
      // Alpha of the end image rises over the window; fade's first frame is fully transparent.
      `[e1]format=yuva420p,${hold(fade, fps)},fade=t=in:s=0:n=${fade + 1}:alpha=1[over]`,
      `[under][over]overlay=eof_action=pass:format=yuv420[mix]`,
      `[e2]${hold(tail, fps)}[tail]`,
      `[head][mix][tail]concat=n=3:v=1:a=0,setpts=N/(${fps}*TB)[bg]`,
    );
  }
  graph.push(
    `[${caption}:v]format=yuva420p,${hold(frames, fps)}[cap]`,
    // Expressions use the time `t` (exactly frame/fps after setpts), not the frame counter `n`,
    // which this build has already advanced when overlay evaluates x: the first and last frames
    // must stay clean (the first frame is the input image, the last the end image).
    `[bg][cap]overlay=x=${plan.caption.left}:y=${plan.caption.top}:eof_action=pass:format=yuv420:enable='between(t,${half},${lastT - half})'[captioned]`,
    // The box enters from the left after the first frame and is gone by the last one (4 px of
    // slack: overlay rounds x to even for 4:2:0).
    `[captioned][${box}:v]overlay=x='-w-4+(W+w+8)*t/${lastT}':y='(H-h)/2+(H/5)*sin(2*PI*t/${lastT})':shortest=1:format=yuv420[v]`,
  );

  return [
    '-hide_banner',
    '-nostdin',
    '-loglevel',
    'error',
    '-nostats',
    '-progress',
    'pipe:1',
    ...inputs,
    '-filter_complex',
    graph.join(';'),
    '-map',
    '[v]',
    ...(audio === null ? [] : ['-map', `${audio}:a`]),
    '-r',
    String(fps),
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    // ultrafast has no mb-tree, so frames that barely change get ever lower QPs and cost
    // as much as keyframes; a QP floor keeps them skipped (about 4x faster at 4k).
    '-x264-params',
    'qpmin=22',
    '-pix_fmt',
    'yuv420p',
    ...(audio === null ? ['-an'] : ['-c:a', 'aac', '-b:a', '96k']),
    '-movflags',
    '+faststart',
    '-f',
    'mp4',
    '-y',
    `file:${plan.output}`,
  ];
}
