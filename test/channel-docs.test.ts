// docs/channels.md lists, per protocol and per built-in profile, what each of our parameters
// becomes and what is refused; those tables are data in the code (the adapters' paramMapping,
// BUILT_IN), rendered by src/channels/channel-doc.ts. This spec fails when the page has fallen
// behind the code: regenerate with `npx tsx scripts/channel-docs.ts`.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MODELS, createValidator, findModel } from '../src/catalog/index.js';
import { generatedBlocks, refreshPage } from '../src/channels/channel-doc.js';
import { parseChannelsConfig } from '../src/channels/config.js';
import { BUILT_IN } from '../src/channels/profiles.js';
import { ADAPTERS } from '../src/channels/protocols/index.js';
import { catalogDefaults, createTargetCheck } from '../src/channels/targets.js';

const page = readFileSync(new URL('../docs/channels.md', import.meta.url), 'utf8');

describe('docs/channels.md: the generated tables', () => {
  const blocks = generatedBlocks(Object.values(ADAPTERS));

  it('has a block for every protocol adapter and for the built-in profiles, and none the code does not make', () => {
    const { unknown, seen } = refreshPage(page, blocks);
    expect(unknown).toEqual([]);
    expect([...seen].sort()).toEqual([...blocks.keys()].sort());
  });

  it('every block is what the code renders now (run `npx tsx scripts/channel-docs.ts` after a change)', () => {
    const { page: fresh } = refreshPage(page, blocks);
    expect(fresh === page, 'docs/channels.md is behind src/channels: run `npx tsx scripts/channel-docs.ts`').toBe(true);
  });

  it('every built-in profile has its section, with its source and every parameter it names', () => {
    for (const profile of BUILT_IN) {
      const at = page.indexOf(`#### \`${profile.protocol}\` \`${profile.model}\``);
      expect(at, `${profile.protocol} ${profile.model}`).toBeGreaterThan(0);
      const section = page.slice(at, page.indexOf('\n####', at + 1));
      expect(section).toContain(profile.source);
      for (const param of Object.keys(profile.params)) expect(section).toContain(`| \`${param}\` |`);
    }
  });
});

describe('a catalog default the route target cannot take', () => {
  const config = parseChannelsConfig(
    JSON.stringify({
      channels: {
        wan: { protocol: 'dashscope', base_url: 'https://ws-example.ap-southeast-1.maas.aliyuncs.com', api_key_env: 'K' },
        fal: { protocol: 'fal', base_url: 'https://queue.fal.run', api_key_env: 'K' },
      },
      routes: [
        { model: 'vendorb/famsd-2.0-i2v-spicy', to: [{ channel: 'fal', upstream_model: 'fal-ai/kling-video/v2.1/pro/image-to-video' }] },
        { model: 'vendora/famz-image-spicy', to: [{ channel: 'wan', upstream_model: 'wan2.6-t2i' }] },
      ],
    }),
    { K: 'key' },
  );
  const check = createTargetCheck(config, ADAPTERS);
  const validator = createValidator(MODELS);

  it('is a 400 naming the parameter and saying it is the default; naming a value the target takes passes', () => {
    const row = findModel('vendorb/famsd-2.0-i2v-spicy');
    if (!row) throw new Error('no catalog row');
    expect(catalogDefaults(row)['resolution']).toBe('720p');
    const body = { model: row.id, prompt: 'p', image: 'https://img.example/a.png' };
    const bare = validator.validate('video', { body, bodyBytes: 100 });
    if (!bare.ok) throw new Error(JSON.stringify(bare.error));
    const problem = check(row.id, 'video', bare.params);
    expect(problem?.param).toBe('resolution');
    expect(problem?.message).toContain(`"720p" is the default of ${row.id}`);
    const chosen = validator.validate('video', { body: { ...body, resolution: '1080p' }, bodyBytes: 100 });
    if (!chosen.ok) throw new Error(JSON.stringify(chosen.error));
    expect(check(row.id, 'video', chosen.params)).toBeUndefined();
  });

  it('a value the client chose is refused without the default note; the default size of an image model says so', () => {
    const asked = validator.validate('video', {
      body: { model: 'vendorb/famsd-2.0-i2v-spicy', prompt: 'p', image: 'https://img.example/a.png', resolution: '480p' },
      bodyBytes: 100,
    });
    if (!asked.ok) throw new Error(JSON.stringify(asked.error));
    const problem = check('vendorb/famsd-2.0-i2v-spicy', 'video', asked.params);
    expect(problem?.param).toBe('resolution');
    expect(problem?.message).not.toContain('is the default of');
    const image = validator.validate('image', { body: { model: 'vendora/famz-image-spicy', prompt: 'p' }, bodyBytes: 100 });
    if (!image.ok) throw new Error(JSON.stringify(image.error));
    const sized = check('vendora/famz-image-spicy', 'image', image.params);
    expect(sized?.param).toBe('width');
    expect(sized?.message).toContain('is the default of vendora/famz-image-spicy');
    expect(sized?.message).toContain(`set 'size'`);
  });
});
