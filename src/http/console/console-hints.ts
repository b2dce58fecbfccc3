import type { ModelRow } from '../../catalog/index.js';
import { RULE3 } from '../../media/image-header.js';

/**
 * What the console needs to check a request as the server would, beyond each model's JSON
 * Schema: the rules a schema does not say (decisions §2, seed rules 1-3) and the body cap.
 * The page carries them in a meta tag; the console's validator (console/src/validate.ts) reads
 * them, and test/console-validate.test.ts holds its messages equal to the server's.
 */
export interface ModelHints {
  /** Seed rule 1: one of these arrays must hold an item (reported as missing `images`). */
  readonly atLeastOneOf?: readonly string[];
  /** Seed rule 2: the whole body at most this many bytes. */
  readonly maxBodyBytes?: number;
  /** Seed rule 2: `extra.image_options[].ref_name` at most this many UTF-8 bytes. */
  readonly refNameMaxBytes?: number;
  /** Seed rule 3 on `image`: PNG or JPEG, at most this many bytes, 300 px, ratio 0.4-2.5. */
  readonly imageMaxBytes?: number;
  /** Image models: bounds of each side of `size`. */
  readonly side?: { readonly min: number; readonly max: number };
}

export interface ConsoleHints {
  readonly bodyLimitBytes: number;
  readonly models: Readonly<Record<string, ModelHints>>;
}

export function consoleHints(rows: readonly ModelRow[], bodyLimitBytes: number): ConsoleHints {
  const models: Record<string, ModelHints> = {};
  for (const row of rows) {
    if (row.kind === 'image') {
      models[row.id] = { side: row.side };
      continue;
    }
    models[row.id] = {
      ...(row.atLeastOneOf ? { atLeastOneOf: row.atLeastOneOf } : {}),
      ...(row.maxBodyBytes !== undefined ? { maxBodyBytes: row.maxBodyBytes } : {}),
      ...(row.imageOptions ? { refNameMaxBytes: row.imageOptions.refNameMaxBytes } : {}),
      ...(row.imageRule3 ? { imageMaxBytes: RULE3.maxBytes } : {}),
    };
  }
  return { bodyLimitBytes, models };
}
