/**
 * src/client/models.generated.ts is derived from the catalog, and src/client/wire.generated.ts from
 * the wire shapes (src/wire), by scripts/generate-client-types.ts. This spec re-generates them in
 * memory and fails when a committed file differs, so a catalog or wire change without
 * `npm run generate` cannot ship stale SDK types.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { GENERATED_PATH, WIRE_GENERATED_PATH, renderClientModels, renderClientWire, typeName } from '../scripts/generate-client-types.js';
import { IMAGE_MODEL_IDS, VIDEO_MODEL_IDS } from '../src/client/index.js';
import { MODELS } from '../src/catalog/index.js';
import type { ModelRow } from '../src/catalog/index.js';

describe('generated client model types', () => {
  it('is up to date with the catalog (run `npm run generate` when this fails)', async () => {
    const committed = await readFile(GENERATED_PATH, 'utf8');
    expect(committed === renderClientModels(), 'src/client/models.generated.ts is stale: run `npm run generate`').toBe(true);
  });

  it('lists every catalog model once, in the family of its row', () => {
    expect(VIDEO_MODEL_IDS).toEqual(MODELS.filter((row) => row.kind === 'video').map((row) => row.id));
    expect(IMAGE_MODEL_IDS).toEqual(MODELS.filter((row) => row.kind === 'image').map((row) => row.id));
  });

  it('notices a catalog change: a new row or a new listed value changes the output', () => {
    const base = MODELS.find((row) => row.id === 'vendora/famw-2.7-t2v');
    if (base?.kind !== 'video') throw new Error('fixture row missing');
    const changed: ModelRow = { ...base, resolution: { values: ['480p', '720p', '1080p', '4k'], default: '720p' } };
    const text = renderClientModels(MODELS.map((row) => (row.id === base.id ? changed : row)));
    expect(text).not.toBe(renderClientModels());
    expect(text).toContain("readonly resolution?: '480p' | '720p' | '1080p' | '4k';");
    const added = renderClientModels([...MODELS, { ...base, id: 'vendorx/new-model' }]);
    expect(added).toContain("'vendorx/new-model': VendorxNewModelParams;");
  });

  it('gives every model a distinct type name and refuses a clash', () => {
    const names = MODELS.map((row) => typeName(row.id));
    expect(new Set(names).size).toBe(names.length);
    const base = MODELS[0];
    if (!base) throw new Error('empty catalog');
    expect(() =>
      renderClientModels([
        { ...base, id: 'a/b-1' },
        { ...base, id: 'a-b/1' },
      ]),
    ).toThrow(/both map to the type name/);
  });

  it('is deterministic', () => {
    expect(renderClientModels()).toBe(renderClientModels());
  });
});

describe('generated client response types', () => {
  it('are up to date with the wire shapes (run `npm run generate` when this fails)', async () => {
    const committed = await readFile(WIRE_GENERATED_PATH, 'utf8');
    expect(committed === renderClientWire(), 'src/client/wire.generated.ts is stale: run `npm run generate`').toBe(true);
  });

  it('import nothing: the SDK takes no server code at run time', async () => {
    expect(await readFile(WIRE_GENERATED_PATH, 'utf8')).not.toMatch(/^\s*import\b/m);
  });

  it('follow the wire schema: every field of the video task and the image data is declared', () => {
    const text = renderClientWire();
    const video = text.slice(text.indexOf('export interface VideoTask {')).split('\n}\n')[0] ?? '';
    for (const field of ['id', 'object', 'model', 'status', 'outputs', 'created_at', 'started_at', 'completed_at', 'progress', 'error']) {
      expect(video).toContain(`\n  readonly ${field}: `);
    }
    expect(text).toContain('readonly status: TaskStatus;');
    expect(text).toContain('readonly status: ImageTaskStatus;');
    expect(text).toContain('readonly error: null | TaskError;');
  });
});
