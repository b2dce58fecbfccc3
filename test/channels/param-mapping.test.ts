import { describe, expect, it } from 'vitest';
import { MODELS } from '../../src/catalog/index.js';
import { arkAdapter } from '../../src/channels/protocols/ark.js';
import { dashscopeAdapter } from '../../src/channels/protocols/dashscope.js';
import { mediagateAdapter } from '../../src/channels/protocols/mediagate.js';

/** Every parameter the catalog accepts has a documented fate in each adapter: never dropped silently. */
const PARAMS = new Set<string>(['prompt', 'duration', 'resolution', 'seed']);
for (const row of MODELS) {
  if (row.kind === 'video') for (const p of [...row.required, ...row.optional]) PARAMS.add(p);
  else for (const p of ['width', 'height', 'prompt_extend', 'seed']) PARAMS.add(p);
}

describe.each([dashscopeAdapter, arkAdapter])('$protocol parameter mapping', (adapter) => {
  it.each([...PARAMS])('documents %s', (param) => {
    const rows = adapter.paramMapping.filter((row) => row.param.split(/[\s,()]+/).includes(param));
    expect(rows.length, `${adapter.protocol}: no mapping row for ${param}`).toBeGreaterThan(0);
  });
});

describe('mediagate parameter mapping', () => {
  it('passes every parameter through', () => {
    expect(mediagateAdapter.paramMapping.find((row) => row.param === '*')?.handling).toBe('mapped');
  });
});
