import type { ModelRow } from './types.js';

/**
 * A model's words for people: its display name, its vendor family and a one-paragraph
 * description. Built-in rows carry a name and what the model does; a declared model may (the
 * models file's `display_name` and `description`), else they are derived from its id and summary.
 * The paragraph ends with the ranges read from the row itself, so it cannot drift from what the
 * validator accepts.
 */

const WORD_ABBREVIATIONS: Readonly<Record<string, string>> = { t2v: 'Text to Video', i2v: 'Image to Video', ref2v: 'Reference to Video', t2i: 'Text to Image' };

const capital = (word: string): string => WORD_ABBREVIATIONS[word.toLowerCase()] ?? word.charAt(0).toUpperCase() + word.slice(1);

/** "acme/zoom-v2_fast" -> "Zoom V2 Fast": the last path segment, split at - and _, each word capitalised. */
export function defaultDisplayName(id: string): string {
  const last =
    id
      .split('/')
      .filter((part) => part !== '')
      .pop() ?? id;
  const words = last.split(/[-_\s]+/).filter((word) => word !== '');
  return words.length === 0 ? id : words.map(capital).join(' ');
}

/** "acme/zoom-2" -> "acme"; "zoom-2" -> "zoom": the vendor prefix, else the first word. */
export function defaultFamily(id: string): string {
  const [first = id] = id.includes('/') ? id.split('/') : id.split(/[-_.]/);
  return first;
}

export function displayName(row: ModelRow): string {
  return row.displayName ?? defaultDisplayName(row.id);
}

export function family(row: ModelRow): string {
  return row.family ?? defaultFamily(row.id);
}

const list = (values: readonly string[]): string => (values.length <= 1 ? values.join('') : `${values.slice(0, -1).join(', ')} or ${values.at(-1) ?? ''}`);

/** What the row accepts, as sentences: durations, resolutions, aspect ratios, image sides. */
export function rangesText(row: ModelRow): string {
  if (row.kind === 'image') {
    return `Sides of ${row.side.min} to ${row.side.max} px; ${row.defaults.width}x${row.defaults.height} by default.`;
  }
  const parts: string[] = [];
  parts.push(row.duration ? `Clips of ${row.duration.min} to ${row.duration.max} s (5 s by default)` : 'Any duration the upstream accepts (5 s by default)');
  if (row.resolution) parts.push(`at ${list(row.resolution.values)} (${row.resolution.default} by default)`);
  const ratios = row.aspectRatio?.values.filter((value) => value !== 'adaptive') ?? [];
  const sentence = `${parts.join(' ')}.`;
  return ratios.length > 0 ? `${sentence} Aspect ratios ${list(ratios)}.` : sentence;
}

/**
 * The paragraph `GET /v1/models` shows: what the model does, then, for a built-in row, its
 * ranges. A declared model's paragraph is the operator's own (its summary when it has none): its
 * parameters may leave the ranges to the upstream, and the operator knows them better.
 */
export function description(row: ModelRow): string {
  const lead = (row.description ?? row.summary).trim();
  return row.declared === undefined ? `${lead} ${rangesText(row)}` : lead;
}
