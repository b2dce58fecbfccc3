/**
 * The byte scan that bounds JSON bodies agrees with a walk of the parsed value: for any JSON
 * text, it reports a problem exactly when the value is deeper, wider or has longer strings than
 * the limits; brackets, commas and quotes inside strings never count.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkJsonLimits, type JsonLimits } from '../src/http/body/json-limits.js';

/** The same bounds, measured on the parsed value (string sizes as serialised, escapes included). */
function exceeds(value: unknown, limits: JsonLimits, depth = 0): boolean {
  const serialisedBytes = (text: string): number => Buffer.byteLength(JSON.stringify(text)) - 2;
  if (typeof value === 'string') return !value.startsWith('data:') && serialisedBytes(value) > limits.maxStringBytes;
  if (value === null || typeof value !== 'object') return false;
  if (depth + 1 > limits.maxDepth) return true;
  const entries = Array.isArray(value) ? value.map((item) => ['', item] as const) : Object.entries(value);
  if (entries.length > limits.maxItems) return true;
  return entries.some(([key, item]) => (!Array.isArray(value) && serialisedBytes(key) > limits.maxStringBytes) || exceeds(item, limits, depth + 1));
}

const LIMITS: JsonLimits = { maxDepth: 4, maxItems: 5, maxStringBytes: 12 };

describe('checkJsonLimits', () => {
  it('agrees with a walk of the parsed value', () => {
    const tricky = fc.constantFrom('[[[[[', ',,,,,,,', '"quoted"', '\\', '\\"', '{}{}', 'data:xxxxxxxxxxxxxxxxxxx', 'ü🦊');
    const value = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        fc.oneof(fc.string({ unit: 'binary', maxLength: 20 }), tricky),
        fc.integer(),
        fc.constant(null),
        fc.array(tie('node'), { maxLength: 7 }),
        fc.dictionary(fc.oneof(fc.string({ maxLength: 16 }), tricky), tie('node'), { maxKeys: 7 }),
      ),
    })).node;
    fc.assert(
      fc.property(value, (input) => {
        const text = JSON.stringify(input);
        const problem = checkJsonLimits(Buffer.from(text), LIMITS);
        expect(problem !== undefined, text).toBe(exceeds(input, LIMITS));
      }),
      { numRuns: 3000 },
    );
  });

  it('names the top-level field where a limit is passed', () => {
    const limits: JsonLimits = { maxDepth: 3, maxItems: 3, maxStringBytes: 8 };
    const check = (text: string) => checkJsonLimits(Buffer.from(text), limits)?.param;
    expect(check('{"a":1,"images":[1,2,3,4]}')).toBe('images');
    expect(check('{"a":"[[[[","extra":{"x":[[1]]}}')).toBe('extra');
    expect(check('{"prompt":"123456789"}')).toBe('prompt');
    expect(check('{"123456789":1}')).toBe('body');
    expect(check('[[[[1]]]]')).toBe('body');
    expect(check('{"a":1,"b":2,"c":3,"d":4}')).toBe('body');
    expect(check('{"a":"data:123456789012345"}')).toBeUndefined();
    expect(check('{"a":"unterminated')).toBeUndefined();
  });
});
