import { createHash } from 'node:crypto';

export type Rgb = readonly [number, number, number];

/** Colours and tone of one render, derived from the request so that equal requests look alike. */
export interface Palette {
  /** Gradient corners: top-left, top-right, bottom-left, bottom-right. */
  readonly corners: readonly [Rgb, Rgb, Rgb, Rgb];
  /** The moving box: a light colour that stands out on the darker gradient. */
  readonly accent: Rgb;
  /** Audio tone in Hz, within two octaves above 220 Hz. */
  readonly toneHz: number;
}

/**
 * A seed of -1 (video) or 0 (image) asks for a random result; any result is then as good as
 * another, so only an explicit seed changes the colours and the prompt hash does the rest.
 */
export function paletteFor(prompt: string, seed: number | undefined): Palette {
  const explicitSeed = seed !== undefined && seed > 0 ? String(seed) : '';
  const digest = createHash('sha256').update(`${explicitSeed}\u0000${prompt}`).digest();
  const byte = (i: number): number => digest[i] ?? 0;
  // Dark corners (<= 160) keep white text readable.
  const dark = (i: number): Rgb => [byte(i) % 160, byte(i + 1) % 160, byte(i + 2) % 160];
  return {
    corners: [dark(0), dark(3), dark(6), dark(9)],
    accent: [160 + (byte(12) % 96), 160 + (byte(13) % 96), 160 + (byte(14) % 96)],
    toneHz: Math.round(220 * 2 ** ((byte(15) % 24) / 12)),
  };
}

export function hex(rgb: Rgb): string {
  return rgb.map((c) => c.toString(16).padStart(2, '0')).join('');
}
