/**
 * The prompt caption: a translucent strip with the first words of the prompt, rendered by
 * sharp (librsvg, or pango when a font file is configured) into raw RGBA that both the image
 * renderer and ffmpeg can lay over a frame. Text never fails a render: without usable fonts the
 * strip stays empty.
 */
import sharp, { type Sharp } from 'sharp';
import type { SandboxLog } from './options.js';

/** Raw RGBA pixels to lay over a frame at (left, top). */
export interface Overlay {
  readonly data: Buffer;
  readonly width: number;
  readonly height: number;
  readonly left: number;
  readonly top: number;
}

const SNIPPET_CHARS = 80;
const MAX_LINES = 2;
const FONT_FAMILY = 'DejaVu Sans, Liberation Sans, Arial, Helvetica, sans-serif';
/** Average advance of a sans-serif glyph, in ems; used to wrap before measuring. */
const AVG_GLYPH_EM = 0.6;

/** The first 80 characters (code points) of the prompt, on one line, well-formed. */
export function promptSnippet(prompt: string): string {
  // Buffer round trip replaces lone surrogates, which XML (and so SVG) rejects.
  const clean = Buffer.from(prompt, 'utf8')
    .toString('utf8')
    // Non-characters (U+FFFE, U+FFFF, U+FDD0..U+FDEF, and the last two of every plane) mean
    // nothing in text, and XML rejects U+FFFE/U+FFFF: left in, they cost the whole caption.
    .replace(/\p{Noncharacter_Code_Point}/gu, '')
    // Control characters are invalid in XML 1.0 too.
    .replace(/\p{Cc}+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  const chars = Array.from(clean);
  return chars.length > SNIPPET_CHARS ? `${chars.slice(0, SNIPPET_CHARS).join('').trimEnd()}…` : clean;
}

export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Greedy word wrap by character count; the last line ends with an ellipsis when text is left over. */
export function wrapLines(text: string, maxChars: number, maxLines: number): string[] {
  const lines: string[] = [];
  let current = '';
  for (const word of text.split(' ')) {
    const candidate = current === '' ? word : `${current} ${word}`;
    if (Array.from(candidate).length <= maxChars) {
      current = candidate;
      continue;
    }
    if (current !== '') lines.push(current);
    current = word;
    // A single word longer than a line is cut.
    while (Array.from(current).length > maxChars) {
      const chars = Array.from(current);
      lines.push(chars.slice(0, maxChars).join(''));
      current = chars.slice(maxChars).join('');
    }
  }
  if (current !== '') lines.push(current);
  if (lines.length <= maxLines) return lines;
  const kept = lines.slice(0, maxLines);
  const last = Array.from(kept[maxLines - 1] ?? '');
  kept[maxLines - 1] = `${last.slice(0, Math.max(0, maxChars - 1)).join('')}…`;
  return kept;
}

function even(value: number): number {
  return Math.max(2, Math.round(value / 2) * 2);
}

interface Layout {
  readonly fontPx: number;
  readonly lines: readonly string[];
  readonly width: number;
  readonly height: number;
}

function layout(prompt: string, frameWidth: number, frameHeight: number): Layout {
  const fontPx = Math.max(8, Math.round(Math.min(frameHeight / 20, frameWidth / 26)));
  const maxChars = Math.max(8, Math.floor((frameWidth * 0.92) / (fontPx * AVG_GLYPH_EM)));
  const lines = wrapLines(promptSnippet(prompt), maxChars, MAX_LINES);
  const height = Math.min(frameHeight, even(Math.max(1, lines.length) * fontPx * 1.3 + fontPx * 0.8));
  return { fontPx, lines, width: frameWidth, height };
}

function stripSvg(box: Layout, withText: boolean): string {
  const lineHeight = box.fontPx * 1.3;
  const firstBaseline = (box.height - lineHeight * box.lines.length) / 2 + box.fontPx * 1.02;
  const tspans = box.lines
    .map((line, i) => `<tspan x="${box.width / 2}" y="${(firstBaseline + i * lineHeight).toFixed(1)}">${escapeXml(line)}</tspan>`)
    .join('');
  const text = withText ? `<text font-family="${FONT_FAMILY}" font-size="${box.fontPx}" fill="#ffffff" text-anchor="middle">${tspans}</text>` : '';
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${box.width}" height="${box.height}"><rect width="100%" height="100%" fill="#000000" fill-opacity="0.45"/>${text}</svg>`;
}

async function toRgba(image: Sharp, box: Layout): Promise<Buffer> {
  const { data, info } = await image.ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  if (info.width !== box.width || info.height !== box.height || info.channels !== 4) {
    throw new Error(`caption rendered as ${info.width}x${info.height}x${info.channels}, expected ${box.width}x${box.height}x4`);
  }
  return data;
}

/** Pango is the only sharp text path that can load a font file (useful on hosts without fonts). */
async function withFontFile(box: Layout, fontFile: string): Promise<Buffer> {
  const markup = `<span foreground="#ffffff">${box.lines.map(escapeXml).join('\n')}</span>`;
  // Giving both width and height makes sharp pick the font size that fits the strip.
  const text = await sharp({
    text: {
      text: markup,
      fontfile: fontFile,
      font: 'sans',
      width: Math.round(box.width * 0.92),
      height: Math.max(1, Math.round(box.height - box.fontPx * 0.6)),
      align: 'centre',
      rgba: true,
    },
  })
    .png()
    .toBuffer();
  return toRgba(sharp(Buffer.from(stripSvg(box, false))).composite([{ input: text, gravity: 'centre' }]), box);
}

/** Caption strip for a frame of the given size, placed near the bottom edge. */
export async function renderCaption(
  prompt: string,
  frameWidth: number,
  frameHeight: number,
  options: { fontFile: string | undefined; log: SandboxLog },
): Promise<Overlay> {
  const box = layout(prompt, frameWidth, frameHeight);
  const top = Math.max(0, Math.min(frameHeight - box.height, Math.round((frameHeight * 0.95 - box.height) / 2) * 2));
  const place = (data: Buffer): Overlay => ({ data, width: box.width, height: box.height, left: 0, top });
  if (box.lines.length > 0) {
    try {
      return place(options.fontFile === undefined ? await toRgba(sharp(Buffer.from(stripSvg(box, true))), box) : await withFontFile(box, options.fontFile));
    } catch (error) {
      options.log('sandbox: caption text could not be rendered; drawing the strip without it', { err: error });
    }
  }
  return place(await toRgba(sharp(Buffer.from(stripSvg(box, false))), box));
}
