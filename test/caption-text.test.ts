/**
 * Prompt text that XML (and so the SVG caption) rejects must not cost the caption: non-characters
 * are stripped, and the strip still carries the text.
 */
import { describe, expect, it } from 'vitest';
import { promptSnippet, renderCaption } from '../src/engines/sandbox/text.js';

const NONCHARACTERS = ['\uFFFE', '\uFFFF', '\uFDD0', '\uFDEF', '\u{1FFFE}', '\u{10FFFF}'];

describe('caption text', () => {
  it('strips non-characters from the prompt snippet', () => {
    expect(promptSnippet(`fox${NONCHARACTERS.join('')} in the snow\uFFFE`)).toBe('fox in the snow');
    for (const c of NONCHARACTERS) expect(promptSnippet(`a${c}b`)).toBe('ab');
  });

  it('renders the caption of a prompt holding U+FFFE/U+FFFF as of the same prompt without them', async () => {
    const logs: string[] = [];
    const options = { fontFile: undefined, log: (msg: string) => logs.push(msg) };
    const dirty = await renderCaption('fox \uFFFEin the\uFFFF snow', 640, 360, options);
    const clean = await renderCaption('fox in the snow', 640, 360, options);
    const empty = await renderCaption('', 640, 360, options);
    expect(logs).toEqual([]);
    expect(dirty.data.equals(clean.data)).toBe(true);
    // The text is drawn: the strip is not the empty one.
    expect(dirty.data.equals(empty.data)).toBe(false);
  });
});
