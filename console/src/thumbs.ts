import { h } from './dom.js';

/**
 * Video thumbnails as still images. They were a `<video preload=metadata>` per history row, and
 * the history re-renders on every progress event of a task this tab follows: each re-render
 * made every row's video again, which had loaded nothing yet (readyState 0 or 1), so while a task
 * ran all the thumbnails showed their black background (seen in Chromium: 8 of 8 black from the
 * second progress event until the task was final). Here a hidden video (two at a time) seeks to
 * a frame, draws it on a canvas and lets its connection go; the frame is kept by URL, so a
 * re-render shows it at once.
 */

/** Seconds into the clip: past a first frame that may be a fade, inside even a 1 s clip. */
const FRAME_AT_S = 0.5;
const SIDE = 96;
const SLOTS = 2;
const TIMEOUT_MS = 20_000;
/** Draws of a frame that came out black before it is kept (REDRAW_MS apart: about a second in all). */
const REDRAWS = 20;
const REDRAW_MS = 50;

const frames = new Map<string, Promise<string | null>>();
/** Frames already read: a re-rendered row gets its image at once, with no flash of the empty box. */
const ready = new Map<string, string>();
const waiting: (() => void)[] = [];
let busy = 0;

async function slot<T>(work: () => Promise<T>): Promise<T> {
  if (busy >= SLOTS) await new Promise<void>((resolve) => waiting.push(resolve));
  busy += 1;
  try {
    return await work();
  } finally {
    busy -= 1;
    waiting.shift()?.();
  }
}

/** Every pixel (near) black: the frame drawn before it was decoded, unless the clip is black there. */
function blank(context: CanvasRenderingContext2D, width: number, height: number): boolean {
  const { data } = context.getImageData(0, 0, width, height);
  for (let i = 0; i < data.length; i += 4) {
    if ((data[i] ?? 0) > 8 || (data[i + 1] ?? 0) > 8 || (data[i + 2] ?? 0) > 8) return false;
  }
  return true;
}

/** A JPEG data URL of a frame of the video; null when it cannot be read (an error, another origin without CORS). */
function grab(url: string): Promise<string | null> {
  return new Promise((resolve) => {
    const video = document.createElement('video');
    video.muted = true;
    video.preload = 'auto';
    video.playsInline = true;
    let done = false;
    const finish = (value: string | null): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      // Releases the connection and the decoder now, not when the element is collected.
      video.removeAttribute('src');
      video.load();
      resolve(value);
    };
    const timer = setTimeout(() => finish(null), TIMEOUT_MS);
    video.addEventListener('loadedmetadata', () => {
      video.currentTime = Math.min(FRAME_AT_S, Number.isFinite(video.duration) ? video.duration / 2 : FRAME_AT_S);
    });
    const capture = (attempt: number): void => {
      if (done) return;
      const scale = SIDE / Math.max(video.videoWidth, video.videoHeight, 1);
      const canvas = document.createElement('canvas');
      canvas.width = Math.max(1, Math.round(video.videoWidth * scale));
      canvas.height = Math.max(1, Math.round(video.videoHeight * scale));
      const context = canvas.getContext('2d', { willReadFrequently: true });
      try {
        context?.drawImage(video, 0, 0, canvas.width, canvas.height);
        // `seeked` can fire before the frame at the new position is decoded (a loaded machine,
        // several videos at once): the canvas then holds black, seen once in Chromium's runs. The
        // frame is drawn again a little later, and a clip that is truly black there is kept as
        // it is after the last try.
        const pending = video.readyState < HTMLMediaElement.HAVE_CURRENT_DATA || (context !== null && blank(context, canvas.width, canvas.height));
        if (pending && attempt < REDRAWS) {
          setTimeout(() => capture(attempt + 1), REDRAW_MS);
          return;
        }
        finish(canvas.toDataURL('image/jpeg', 0.85));
      } catch {
        finish(null); // a tainted canvas: the output is on another origin without CORS
      }
    };
    video.addEventListener('seeked', () => capture(0));
    video.addEventListener('error', () => finish(null));
    video.src = url;
  });
}

/** The frame of a video URL, read once per URL (signed URLs of one task differ only when re-signed). */
export function frameOf(url: string): Promise<string | null> {
  let frame = frames.get(url);
  if (frame === undefined) {
    frame = slot(() => grab(url)).then((value) => {
      if (value !== null) ready.set(url, value);
      return value;
    });
    frames.set(url, frame);
  }
  return frame;
}

/**
 * A thumbnail element for a video output: an `<img>` that gets the frame when it is read; where
 * it cannot be read, the video itself (sought to the frame) is shown instead.
 */
export function videoThumb(url: string): HTMLElement {
  const known = ready.get(url);
  if (known !== undefined) return h('img', { class: 'thumb', alt: '', src: known, 'data-thumb': 'frame' });
  const img = h('img', { class: 'thumb', alt: '', 'data-thumb': 'loading' });
  void frameOf(url).then((frame) => {
    if (frame !== null) {
      img.src = frame;
      img.dataset['thumb'] = 'frame';
      return;
    }
    const video = h('video', { class: 'thumb', src: `${url}#t=${FRAME_AT_S}`, preload: 'auto', muted: true, playsinline: true, 'aria-hidden': 'true' });
    video.dataset['thumb'] = 'video';
    img.replaceWith(video);
  });
  return img;
}
