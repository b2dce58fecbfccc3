import { h } from './dom.js';

/**
 * Video thumbnails as still images. A `<video preload=metadata>` per history row rendered black:
 * preload=metadata decodes no frame at all until the browser chooses to, each paused element
 * keeps its connection open (Chromium allows six per origin, so rows past the sixth never load),
 * and the history re-renders on every progress event, which threw away elements still loading.
 * Here one hidden video at a time per slot seeks to a frame, draws it on a canvas and lets its
 * connection go; the frame is kept by URL, so a re-render shows it at once.
 */

/** Seconds into the clip: past a first frame that may be a fade, inside even a 1 s clip. */
const FRAME_AT_S = 0.5;
const SIDE = 96;
const SLOTS = 2;
const TIMEOUT_MS = 20_000;

const frames = new Map<string, Promise<string | null>>();
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
    video.addEventListener('seeked', () => {
      const scale = SIDE / Math.max(video.videoWidth, video.videoHeight, 1);
      const canvas = document.createElement('canvas');
      canvas.width = Math.max(1, Math.round(video.videoWidth * scale));
      canvas.height = Math.max(1, Math.round(video.videoHeight * scale));
      try {
        canvas.getContext('2d')?.drawImage(video, 0, 0, canvas.width, canvas.height);
        finish(canvas.toDataURL('image/jpeg', 0.85));
      } catch {
        finish(null); // a tainted canvas: the output is on another origin without CORS
      }
    });
    video.addEventListener('error', () => finish(null));
    video.src = url;
  });
}

/** The frame of a video URL, read once per URL (signed URLs of one task differ only when re-signed). */
export function frameOf(url: string): Promise<string | null> {
  let frame = frames.get(url);
  if (frame === undefined) {
    frame = slot(() => grab(url));
    frames.set(url, frame);
  }
  return frame;
}

/**
 * A thumbnail element for a video output: an `<img>` that gets the frame when it is read; where
 * it cannot be read, the video itself (sought to the frame) is shown instead.
 */
export function videoThumb(url: string): HTMLElement {
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
