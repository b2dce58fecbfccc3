/**
 * Runs the type checker over the type-level tests, so `npx vitest run test/types` fails when a
 * refused parameter compiles (its `@ts-expect-error` becomes TS2578) or an accepted one does not.
 * `npm run typecheck` covers the same files; this makes the check part of the vitest run too.
 * The SDK guide's and the README's examples are compiled the same way, so the documentation cannot drift.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FILES = ['test/types/client-params.test.ts', 'test/types/client-task-operations.test.ts', 'test/types/client-usage.test.ts'].map((file) =>
  fileURLToPath(new URL(`../../${file}`, import.meta.url)),
);

function compilerOptions(): ts.CompilerOptions {
  const configPath = ts.findConfigFile(ROOT, (path) => ts.sys.fileExists(path), 'tsconfig.json');
  if (!configPath) throw new Error('tsconfig.json not found');
  const config = ts.readConfigFile(configPath, (path) => ts.sys.readFile(path));
  if (config.error) throw new Error(ts.flattenDiagnosticMessageText(config.error.messageText, '\n'));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
  return { ...parsed.options, noEmit: true };
}

/** Type-checks `files`; `virtual` files exist only in memory. Returns the diagnostics as text. */
function check(files: readonly string[], virtual: ReadonlyMap<string, string> = new Map()): string[] {
  const options = compilerOptions();
  const host = ts.createCompilerHost(options);
  const fileExists = host.fileExists.bind(host);
  const readFile = host.readFile.bind(host);
  host.fileExists = (path) => virtual.has(path) || fileExists(path);
  host.readFile = (path) => virtual.get(path) ?? readFile(path);
  const program = ts.createProgram([...files], options, host);
  const diagnostics = files.flatMap((file) => {
    const source = program.getSourceFile(file);
    if (!source) throw new Error(`${file} is not in the program`);
    return [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)];
  });
  return diagnostics.map((diagnostic) => {
    const where = diagnostic.file && diagnostic.start !== undefined ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start) : undefined;
    return `${diagnostic.file?.fileName ?? ''}:${where ? where.line + 1 : 0} TS${diagnostic.code} ${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`;
  });
}

/**
 * Every ```ts block of the SDK guide (docs/guides/sdk.md) and of the README's "Try it", importing
 * the sources instead of the package.
 */
function documentedExamples(): string[] {
  const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
  const blocks = ['docs/guides/sdk.md', 'README.md'].flatMap((path) => {
    const found = [...read(path).matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
    if (found.length === 0) throw new Error(`${path} has no \`\`\`ts block`);
    return found;
  });
  return blocks.map((code) => code.replaceAll("from 'mediagate/client'", "from '../../src/client/index.js'"));
}

describe('SDK type-level tests', () => {
  it('compile with no diagnostics (every @ts-expect-error is an error, everything else compiles)', () => {
    expect(check(FILES)).toEqual([]);
  });

  it('the documented examples compile against the SDK, their @ts-expect-error lines included', () => {
    const examples = documentedExamples();
    expect(examples[0]).toContain('createAndWait');
    examples.forEach((example, index) => {
      const path = fileURLToPath(new URL(`./doc-example-${index}.virtual.ts`, import.meta.url));
      expect(check([path], new Map([[path, example]]))).toEqual([]);
    });
  });
});
