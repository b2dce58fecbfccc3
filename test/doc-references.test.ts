// Comments in src/ cite "seed rule N" and "decisions §N"; each must name a heading in docs/ a
// reader can open (docs/interface.md, "Where the code's references point"), and the docs' own
// #links must land on a heading.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

function files(dir: string, suffix: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return files(path, suffix);
    return entry.name.endsWith(suffix) ? [path] : [];
  });
}

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchors(markdown: string): Set<string> {
  const found = new Set<string>();
  for (const line of markdown.split('\n')) {
    const heading = /^#{1,6}\s+(.*)$/.exec(line);
    if (heading?.[1]) found.add(slug(heading[1]));
    for (const explicit of line.matchAll(/<a id="([^"]+)"/g)) if (explicit[1]) found.add(explicit[1]);
  }
  return found;
}

interface Reference {
  where: string;
  text: string;
  anchor: string | undefined;
}

/** The references of one source text, each with the anchor it needs (undefined: names no document). */
function references(where: string, text: string): Reference[] {
  const found: Reference[] = [];
  text.split('\n').forEach((line, index) => {
    const at = `${where}:${index + 1}`;
    for (const match of line.matchAll(/seed rule (\d+)/gi)) found.push({ where: at, text: match[0], anchor: `seed-rule-${match[1]}` });
    for (const match of line.matchAll(/(decisions\s+)?§\s*(\d+(?:\.\d+)?)/gi)) {
      const section = match[2] ?? '';
      found.push({ where: at, text: match[0], anchor: match[1] ? slug(`Decisions §${section}`) : undefined });
    }
  });
  return found;
}

const docs = files(join(root, 'docs'), '.md').map((path) => ({ path, text: readFileSync(path, 'utf8') }));
const known = new Set(docs.flatMap((doc) => [...anchors(doc.text)]));

describe('references from the code to docs/', () => {
  const found = files(join(root, 'src'), '.ts').flatMap((path) => references(relative(root, path), readFileSync(path, 'utf8')));

  it('finds the references the code makes', () => {
    expect(found.length).toBeGreaterThan(10);
  });

  it('each names a section of docs/ that exists', () => {
    const broken = found.filter((reference) => reference.anchor === undefined || !known.has(reference.anchor));
    expect(broken.map((reference) => `${reference.where}: "${reference.text}" -> ${reference.anchor ? `#${reference.anchor}` : 'say "decisions §N"'}`)).toEqual(
      [],
    );
  });

  it('reads the forms it checks, and flags a section it cannot resolve', () => {
    const sample = references('x.ts', '// seed rule 3 and decisions §5; INTERFACE-DECISIONS §6; a bare §2; decisions §9');
    expect(sample.map((reference) => reference.anchor)).toEqual(['seed-rule-3', 'decisions-5', 'decisions-6', undefined, 'decisions-9']);
    expect(known.has('decisions-9')).toBe(false);
  });
});

describe('links inside docs/', () => {
  it('every #anchor link lands on a heading of its page', () => {
    const broken = docs.flatMap((doc) => {
      const own = anchors(doc.text);
      return [...doc.text.matchAll(/\]\(#([^)]+)\)/g)]
        .map((match) => match[1] ?? '')
        .filter((anchor) => !own.has(anchor))
        .map((anchor) => `${relative(root, doc.path)}#${anchor}`);
    });
    expect(broken).toEqual([]);
  });
});
