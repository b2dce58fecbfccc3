/**
 * Output geometry (decisions §6): resolution x aspect ratio -> exact pixel size.
 * Pure functions with no imports, so the catalog, the engines and the tests agree on one rule.
 *
 * Every engine must honour these numbers: clients rely on `720p` at `16:9` being 1280x720.
 */

/** What an absent or unreadable resolution means: the most common default of the model table. */
const DEFAULT_SHORT_SIDE = 720;
const MIN_SHORT_SIDE = 64;
const MAX_SHORT_SIDE = 2160;
const DEFAULT_ASPECT = '16:9';

const NAMED_SHORT_SIDES: Readonly<Record<string, number>> = { '2k': 1440, '4k': 2160 };

/** Nearest even integer: H.264 with 4:2:0 chroma needs even sides. */
function roundEven(value: number): number {
  return Math.round(value / 2) * 2;
}

/**
 * The shorter side in pixels: `Np` -> N, `2k`/`2K` -> 1440, `4k`/`4K` -> 2160, anything else -> 720.
 * Clamped to [64, 2160] and made even.
 */
export function shortSide(resolution: string | undefined): number {
  if (resolution === undefined) return DEFAULT_SHORT_SIDE;
  const text = resolution.trim().toLowerCase();
  let side = NAMED_SHORT_SIDES[text];
  if (side === undefined) {
    const match = /^(\d{1,6})p$/.exec(text);
    side = match ? Number(match[1]) : DEFAULT_SHORT_SIDE;
  }
  return roundEven(Math.min(MAX_SHORT_SIDE, Math.max(MIN_SHORT_SIDE, side)));
}

/** `W:H` with positive (possibly decimal) numbers -> W/H; anything else -> null. */
export function parseRatio(ar: string): number | null {
  const match = /^\s*(\d+(?:\.\d+)?)\s*:\s*(\d+(?:\.\d+)?)\s*$/.exec(ar);
  if (!match) return null;
  const w = Number(match[1]);
  const h = Number(match[2]);
  if (!(w > 0) || !(h > 0) || !Number.isFinite(w / h)) return null;
  return w / h;
}

/**
 * The listed ratio nearest to `imageRatio`, compared on a log scale so that 2:1 and 1:2 are
 * equally far from 1:1. Ties keep the earlier entry. `adaptive` and unparseable entries are
 * skipped; with nothing left the answer is 16:9.
 */
export function snapRatio(imageRatio: number, listed: readonly string[]): string {
  let best: string | null = null;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of listed) {
    const ratio = parseRatio(candidate);
    if (ratio === null) continue;
    const distance = Math.abs(Math.log(imageRatio / ratio));
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best ?? DEFAULT_ASPECT;
}

/**
 * The aspect ratio an output uses: a parseable `aspect_ratio` as given; for `adaptive`, or when
 * absent with an input image, the image's ratio snapped to the model's list; otherwise 16:9.
 */
export function resolveAspect(
  aspectRatio: string | undefined,
  listed: readonly string[],
  inputImage: { readonly width: number; readonly height: number } | null,
): string {
  if (aspectRatio !== undefined && aspectRatio !== 'adaptive') {
    return parseRatio(aspectRatio) === null ? DEFAULT_ASPECT : aspectRatio;
  }
  if (inputImage !== null && inputImage.width > 0 && inputImage.height > 0) {
    return snapRatio(inputImage.width / inputImage.height, listed);
  }
  return DEFAULT_ASPECT;
}

/**
 * Pixel size of a video: the shorter side from `resolution`, the longer side that times the
 * ratio rounded to the nearest even integer; landscape puts the long side on the width.
 */
export function videoSize(resolution: string | undefined, aspectRatio: string): { width: number; height: number } {
  const short = shortSide(resolution);
  const ratio = parseRatio(aspectRatio) ?? 16 / 9;
  const long = roundEven(short * Math.max(ratio, 1 / ratio));
  return ratio >= 1 ? { width: long, height: short } : { width: short, height: long };
}
