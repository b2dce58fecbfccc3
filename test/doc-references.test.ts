// The repository stands on its own: every reference in its code, specs and docs resolves inside
// it. "seed rule N" and "decisions §N" name a heading of docs/ (docs/interface.md, "Where the
// code's references point"); markdown links and mentions of repository paths name files that
// exist, and their #anchors name headings; nothing cites a document kept outside the repository,
// a tracker's issue number, a name from how the work was organised, or a machine's absolute path.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const self = relative(root, fileURLToPath(import.meta.url));

/** Build output, dependencies, run data: not the repository's text. */
const SKIPPED_DIRECTORIES = new Set(['node_modules', 'dist', '.git', 'data', 'test-artifacts', '.bench-out', 'tmp']);
const TEXT = /\.(ts|mts|cts|js|mjs|cjs|json|md|css|html|sql|yml|yaml)$|^run$/;

function files(dir: string, accept: (name: string) => boolean): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return SKIPPED_DIRECTORIES.has(entry.name) ? [] : files(path, accept);
    return accept(entry.name) ? [path] : [];
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

/** What a reader of this repository cannot open: each pattern with what to write instead. */
const OUTSIDE: readonly { pattern: RegExp; instead: string }[] = [
  { pattern: /\bissues?\s+#?\d+/gi, instead: "a tracker's issue: say what the code does and why" },
  {
    pattern: /\bsections?\s+(?:\d+(?:\.\d+)*|[A-G]\d?)\b|(?<![\w.])[A-G]\.\d+(?:\.\d+)*\b/g,
    instead: 'a numbered section of no page here: cite "decisions §N" or a docs/ page and its #anchor',
  },
  { pattern: /\bchannels-[A-Z]\b|\bthe lead\b|\blead's\b/gi, instead: 'a name from how the work was organised: name the thing itself' },
  { pattern: /(?<![\w.~-])\/(?:work|home|Users|root)\/[\w.-]/g, instead: "a machine's absolute path" },
];

/** The markdown pages the repository holds, by file name (README.md, SECURITY.md, docs/...). */
const PAGE_NAMES = new Set(files(root, (name) => name.endsWith('.md')).map((path) => path.split('/').pop() ?? ''));

/**
 * A document cited by its upper-case name, as a file (`NOTES.md`) or followed by a section
 * (`ROADMAP-NOTES §6`, `TEAM-PLAN section A`): it must be a page of this repository.
 */
const CITED_DOCUMENT = /\b([A-Z][A-Z0-9]*(?:-[A-Z0-9]+)*)(?:\.md\b|(?=\s*(?:§|sections?\b)))/g;

/** A relative path that climbs out of the repository from the file that names it. */
const CLIMBING_PATH = /(?<![\w./-])((?:\.\.\/)+[\w.-]+(?:\/[\w.-]+)*)/g;

/** Citations of documents this repository does not hold, in one line of `file`. */
function outsideDocuments(file: string, line: string): string[] {
  const problems: string[] = [];
  for (const match of line.matchAll(CITED_DOCUMENT)) {
    const name = match[1] ?? '';
    if (/^[A-Z]$/.test(name) || PAGE_NAMES.has(`${name}.md`)) continue;
    problems.push(`"${match[0]}": a document outside the repository: cite the page of docs/ that says it`);
  }
  for (const match of line.matchAll(CLIMBING_PATH)) {
    const target = resolve(root, dirname(file), match[1] ?? '');
    if (target === root || target.startsWith(`${root}/`)) continue;
    problems.push(`"${match[0]}": a path outside the repository: bring what it says into docs/`);
  }
  return problems;
}

/**
 * Repository paths named in a text: `docs/x.md#anchor`, `src/a/b.ts`, `test/helpers/`. Only a
 * file with an extension or a directory with its slash counts: `test/model` is a model id.
 */
const REPOSITORY_PATH = /(?<![\w/.@~-])((?:docs|src|test|console|packages|scripts|bench)\/(?:[\w.-]+\/)*(?:[\w-]+(?:\.\w+)+)?)(?:#([\w-]+))?(?![\w/-])/g;
/** Made by the tools (`npm run build`, `npm run bench`), not kept in the repository. */
const GENERATED = /(^|\/)(dist|node_modules|tmp)\/|^bench\/results\/profiles\//;
/** Markdown links with a target in the repository (not http:, https:, mailto:). */
const MARKDOWN_LINK = /\]\((?!https?:|mailto:)([^)\s#]*)(?:#([^)\s]+))?\)/g;

const texts = files(root, (name) => TEXT.test(name) && name !== 'package-lock.json')
  .map((path) => ({ path: relative(root, path), text: readFileSync(path, 'utf8') }))
  .filter((file) => file.path !== self);
const docs = texts.filter((file) => file.path.startsWith('docs/') && file.path.endsWith('.md'));
const known = new Set(docs.flatMap((doc) => [...anchors(doc.text)]));

/** Problems of a path named from `from` (relative to `base`), with its anchor when it has one. */
function unresolved(base: string, target: string, anchor: string | undefined): string | undefined {
  const path = resolve(root, base, target);
  if (!existsSync(path)) return 'no such file';
  if (anchor === undefined || !path.endsWith('.md') || statSync(path).isDirectory()) return undefined;
  return anchors(readFileSync(path, 'utf8')).has(anchor) ? undefined : `no heading #${anchor}`;
}

/** Each line of each text with its number, for messages that point at it. */
function lines(): { at: string; file: string; line: string }[] {
  return texts.flatMap((file) => file.text.split('\n').map((line, index) => ({ at: `${file.path}:${index + 1}`, file: file.path, line })));
}

describe('references from the code to docs/', () => {
  const found = texts.filter((file) => !file.path.endsWith('.md')).flatMap((file) => references(file.path, file.text));

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
    const sample = references('x.ts', '// seed rule 3 and decisions §5; ROADMAP-NOTES §6; a bare §2; decisions §9');
    expect(sample.map((reference) => reference.anchor)).toEqual(['seed-rule-3', 'decisions-5', undefined, undefined, 'decisions-9']);
    expect(known.has('decisions-9')).toBe(false);
  });
});

describe('references inside the documentation', () => {
  it('every "decisions §N" and "seed rule N" of a markdown page names a heading of docs/', () => {
    const broken = texts
      .filter((file) => file.path.endsWith('.md'))
      .flatMap((doc) => references(doc.path, doc.text))
      .filter((reference) => reference.anchor === undefined || !known.has(reference.anchor))
      .map((reference) => `${reference.where}: "${reference.text}"`);
    expect(broken).toEqual([]);
  });
});

describe('links and paths resolve inside the repository', () => {
  it('every markdown link names a file of the repository, and its #anchor a heading there', () => {
    const broken = texts
      .filter((file) => file.path.endsWith('.md'))
      .flatMap((file) =>
        [...file.text.matchAll(MARKDOWN_LINK)].flatMap((match) => {
          const target = match[1] ?? '';
          const problem = unresolved(dirname(file.path), target === '' ? (file.path.split('/').pop() ?? '') : target, match[2]);
          return problem ? [`${file.path}: ${match[0]}: ${problem}`] : [];
        }),
      );
    expect(broken).toEqual([]);
  });

  it('every repository path named in code, specs or docs exists, and a docs/ #anchor is a heading', () => {
    const broken = lines().flatMap(({ at, line }) =>
      [...line.matchAll(REPOSITORY_PATH)].flatMap((match) => {
        const target = match[1] ?? '';
        if (GENERATED.test(target)) return [];
        const problem = unresolved('.', target, match[2]);
        return problem ? [`${at}: ${match[0]}: ${problem}`] : [];
      }),
    );
    expect(broken).toEqual([]);
  });

  it('reads the paths it checks', () => {
    const named = (text: string) => [...text.matchAll(REPOSITORY_PATH)].map((match) => `${match[1] ?? ''}${match[2] ? `#${match[2]}` : ''}`);
    expect(named('see docs/interface.md#decisions-2, `src/store/sql/`. And GET /docs/x or https://h/src/y.')).toEqual([
      'docs/interface.md#decisions-2',
      'src/store/sql/',
    ]);
    expect(unresolved('.', 'docs/interface.md', 'decisions-2')).toBeUndefined();
    expect(unresolved('.', 'docs/interface.md', 'decisions-99')).toBe('no heading #decisions-99');
    expect(unresolved('.', 'docs/nowhere.md', undefined)).toBe('no such file');
  });
});

describe('nothing cites what lies outside the repository', () => {
  it('no outside document, issue number, organisational name or machine path', () => {
    const broken = lines().flatMap(({ at, file, line }) => [
      ...OUTSIDE.flatMap(({ pattern, instead }) => [...line.matchAll(pattern)].map((match) => `${at}: "${match[0]}": ${instead}`)),
      ...outsideDocuments(file, line).map((problem) => `${at}: ${problem}`),
    ]);
    expect(broken).toEqual([]);
  });

  it('recognises each form', () => {
    // The documents named here are made up: what is checked is the form of a citation.
    const flagged = (text: string) =>
      OUTSIDE.some(({ pattern }) => [...text.matchAll(pattern)].length > 0) || outsideDocuments('docs/page.md', text).length > 0;
    for (const text of [
      'see ROADMAP-NOTES §6',
      '(TEAM-PLAN.md section A)',
      'NOTES.md section 2',
      'in ../../elsewhere/PLAN.md',
      'as issue 11 asks',
      'Issue #15 item 4',
      '(section 8.3)',
      'checklist B.12',
      'the B.7 DELETE table (A.4.6)',
      "beside channels-B's fakes",
      "the lead's specs",
      'at /work/shared/x',
      'in /home/me/repo',
    ]) {
      expect(flagged(text), text).toBe(true);
    }
    for (const text of [
      'MEDIAGATE_CHANNELS_FILE',
      'docs/channels.md',
      'GET /v1/video/generations',
      'https://example.com/home/x',
      'WiseLibs/better-sqlite3#1515',
      'the /mnt/mediagate volume',
      'see README.md and SECURITY.md',
      'the ../interface.md page, ../src/store/ and ../guides/sdk.md',
      'HTTP 402 (section-less), an SQL WHERE',
    ]) {
      expect(flagged(text), text).toBe(false);
    }
  });
});

describe('links inside docs/', () => {
  it('every #anchor link lands on a heading of its page', () => {
    const broken = docs.flatMap((doc) => {
      const own = anchors(doc.text);
      return [...doc.text.matchAll(/\]\(#([^)]+)\)/g)]
        .map((match) => match[1] ?? '')
        .filter((anchor) => !own.has(anchor))
        .map((anchor) => `${doc.path}#${anchor}`);
    });
    expect(broken).toEqual([]);
  });
});

describe('the README is the front door', () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');

  it('stays short: what mediagate is, the two commands, trying it, and where to go next', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(250);
  });

  it('starts with exactly the two commands', () => {
    const quickStart = readme.slice(readme.indexOf('## Quick start'), readme.indexOf('\n## ', readme.indexOf('## Quick start') + 1));
    const commands = [...quickStart.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => (match[1] ?? '').trim());
    expect(commands).toEqual(['npm ci && npm start', 'npm ci && npm test']);
  });

  it('reaches every page of docs/, through its links and theirs', () => {
    const byPath = new Map(texts.map((file) => [file.path, file.text]));
    const reached = new Set<string>();
    const visit = (path: string) => {
      if (reached.has(path)) return;
      reached.add(path);
      for (const match of (byPath.get(path) ?? '').matchAll(MARKDOWN_LINK)) {
        if (!match[1]) continue; // a #link within the page
        const target = relative(root, resolve(root, dirname(path), match[1]));
        const isDirectory = existsSync(join(root, target)) && statSync(join(root, target)).isDirectory();
        // A directory link lands on its listing: every page in it is one click away.
        if (isDirectory) for (const doc of docs.filter((page) => dirname(page.path) === target)) visit(doc.path);
        else visit(target);
      }
    };
    visit('README.md');
    expect(docs.map((doc) => doc.path).filter((path) => !reached.has(path))).toEqual([]);
  });
});
