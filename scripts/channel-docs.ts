/**
 * Rewrites the generated tables of docs/channels.md (per protocol: the adapters' paramMapping;
 * per built-in profile: its rules and the catalog defaults it refuses) from the code.
 * Run: npx tsx scripts/channel-docs.ts   (test/channel-docs.test.ts fails when the page is behind)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { generatedBlocks, refreshPage } from '../src/channels/channel-doc.js';
import { ADAPTERS } from '../src/channels/protocols/index.js';

const file = new URL('../docs/channels.md', import.meta.url);
const { page, unknown } = refreshPage(readFileSync(file, 'utf8'), generatedBlocks(Object.values(ADAPTERS)));
if (unknown.length > 0) {
  process.stderr.write(`docs/channels.md names blocks the code does not make: ${unknown.join(', ')}\n`);
  process.exit(1);
}
writeFileSync(file, page);
