import { describe, expect, it } from 'vitest';
import { MODELS, defaultDisplayName, description, displayName, family, parseModelsFile } from '../src/catalog/index.js';

/**
 * The catalog's words for people (src/catalog/names.ts): every built-in row has a display name,
 * a family and a paragraph whose ranges are read from the row; a declared model without them
 * gets a name derived from its id and its summary as its paragraph.
 */

describe('built-in rows', () => {
  it('all 23 carry a display name, a family and a description of their own', () => {
    expect(MODELS).toHaveLength(23);
    for (const row of MODELS) {
      expect(row.displayName, row.id).toMatch(/^\S.{3,60}$/);
      expect(row.family, row.id).toMatch(/^[A-Za-z0-9]+$/);
      expect(row.description?.length ?? 0, row.id).toBeGreaterThan(60);
      expect(row.description, row.id).not.toMatch(/\n/);
    }
    expect(new Set(MODELS.map(displayName)).size).toBe(23);
  });

  it('the paragraph ends with the ranges the validator enforces', () => {
    const t2v = MODELS.find((row) => row.id === 'vendora/famw-2.7-t2v');
    expect(t2v && description(t2v)).toMatch(
      /Clips of 2 to 15 s \(5 s by default\) at 480p, 720p or 1080p \(720p by default\)\. Aspect ratios 16:9, 9:16, 1:1, 4:3 or 3:4\.$/,
    );
    const free = MODELS.find((row) => row.id === 'vendorc-h3-max-reference-to-video');
    expect(free && description(free)).toMatch(/Any duration the upstream accepts/);
    const image = MODELS.find((row) => row.id === 'vendora/famz-image-spicy-pro');
    expect(image && description(image)).toMatch(/Sides of 256 to 2560 px; 1024x1024 by default\.$/);
  });
});

describe('declared models', () => {
  it('without display_name and description: a name from the id, a family from its prefix, the summary as the paragraph', () => {
    const [row] = parseModelsFile(JSON.stringify({ models: [{ id: 'acme/zoom-v2_fast', kind: 'video', summary: 'Zoom.', params: {} }] }), MODELS);
    expect(row && [displayName(row), family(row), description(row)]).toEqual(['Zoom V2 Fast', 'acme', 'Zoom.']);
  });

  it('with them: the operator’s words as given', () => {
    const file = { models: [{ id: 'kling-3', kind: 'image', summary: 'K.', display_name: 'Kling 3', description: 'Posters.\nIn one paragraph.', params: {} }] };
    const [row] = parseModelsFile(JSON.stringify(file), MODELS);
    expect(row && [displayName(row), family(row), description(row)]).toEqual(['Kling 3', 'kling', 'Posters.\nIn one paragraph.']);
  });

  it.each([
    ['vendora/famw-2.7-t2v', 'Famw 2.7 Text to Video'],
    ['acme/i2v', 'Image to Video'],
    ['plain', 'Plain'],
  ])('defaultDisplayName(%s) = %s', (id, name) => {
    expect(defaultDisplayName(id)).toBe(name);
  });
});
