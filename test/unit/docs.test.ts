import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The repository explains itself: a README a newcomer reads in minutes, one docs/ page per topic, and nothing
 * that points to a document a clone of the repository doesn't have. What this file keeps so:
 * - README.md at most 350 lines; no Markdown table row over 600 characters (a table shows each figure's latest
 *   value; history lives in git);
 * - no reference to a document outside the repository, in the Markdown or in source comments;
 * - every relative link resolves to a file (and its #anchor to a heading of that file), every repository path
 *   and `npm run` script the Markdown names exists.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SELF = fileURLToPath(import.meta.url);

function walk(dir: string, keep: (name: string) => boolean): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return walk(path, keep);
    return keep(entry.name) ? [path] : [];
  });
}

/** Every Markdown file of the repository (README.md, docs/, and the READMEs of subfolders). */
const MARKDOWN = [
  join(ROOT, 'README.md'),
  ...['docs', 'lib', 'functions', 'infra', 'test'].flatMap((dir) =>
    existsSync(join(ROOT, dir)) ? walk(join(ROOT, dir), (name) => name.endsWith('.md')) : [],
  ),
];

const SOURCES = ['lib', 'functions', 'infra', 'test'].flatMap((dir) =>
  walk(join(ROOT, dir), (name) => name.endsWith('.ts')).filter((path) => path !== SELF),
);

const read = (path: string) => readFileSync(path, 'utf8');
const name = (path: string) => relative(ROOT, path);

/**
 * References a reader of the repository can't follow: the sibling folder of background documents, the
 * documents in it by name, their section numbers, and issue numbers of a tracker that isn't in the repository.
 */
const OUTSIDE = [
  /\.\.\/shared\b/i,
  /\bshared\/(?:reference|spec|design|conventions)/i,
  /\bdesign sections? \d/i,
  /\bdesign\.md\b/i,
  /\bspec\/0\d\d/i,
  /\bconventions\.md\b/i,
  /\bconventions \d/i,
  /\banchor-api\b/i,
  /\bissue \d+/i,
];

function outsideReferences(path: string, text: string): string[] {
  return text
    .split('\n')
    .flatMap((line, index) =>
      OUTSIDE.filter((pattern) => pattern.test(line)).map(() => `${name(path)}:${index + 1}: ${line.trim()}`),
    );
}

/** GitHub's anchor for a heading: lowercase, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchors(path: string): Set<string> {
  const text = read(path).replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6}\s+(.+)$/gm)].map((match) => slug(match[1]!)));
}

/** Text outside fenced code blocks, where Markdown links live. */
const prose = (text: string) => text.replace(/```[\s\S]*?```/g, '');

/** The inline code spans and fenced blocks, where paths and commands are named. */
function codeText(text: string): string[] {
  return [...text.matchAll(/```[\s\S]*?```|`[^`\n]+`/g)].map((match) => match[0]);
}

const PATH_IN_CODE = /(?:^|[\s(`'"=])((?:lib|functions|infra|test|docs|\.ci)\/[\w./-]*)/g;

describe('the README and docs/', () => {
  it('README.md is read in ten minutes: at most 350 lines', () => {
    expect(read(join(ROOT, 'README.md')).split('\n').length).toBeLessThanOrEqual(350);
  });

  it('has one docs page per topic', () => {
    for (const page of [
      'api',
      'operations',
      'events',
      'settlement',
      'ledger',
      'simulation',
      'performance',
      'configuration',
      'decisions',
    ])
      expect(existsSync(join(ROOT, 'docs', `${page}.md`)), `docs/${page}.md`).toBe(true);
  });

  it('has no table row over 600 characters', () => {
    const long = MARKDOWN.flatMap((path) =>
      read(path)
        .split('\n')
        .flatMap((line, index) => (line.startsWith('|') && line.length > 600 ? [`${name(path)}:${index + 1}`] : [])),
    );
    expect(long).toEqual([]);
  });

  it('points to no document outside the repository', () => {
    expect(MARKDOWN.flatMap((path) => outsideReferences(path, read(path)))).toEqual([]);
  });

  it('every relative link resolves to a file, and every #anchor to one of its headings', () => {
    const broken: string[] = [];
    for (const path of MARKDOWN) {
      for (const match of prose(read(path)).matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = match[1]!;
        if (/^[a-z]+:/i.test(target)) continue;
        const [file, anchor] = target.split('#') as [string, string | undefined];
        const resolved = file === '' ? path : resolve(dirname(path), file);
        if (!existsSync(resolved)) {
          broken.push(`${name(path)}: ${target} (no such file)`);
          continue;
        }
        if (anchor && resolved.endsWith('.md') && !anchors(resolved).has(anchor))
          broken.push(`${name(path)}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('every repository path the Markdown names exists', () => {
    const missing: string[] = [];
    for (const path of MARKDOWN) {
      for (const code of codeText(read(path))) {
        for (const match of code.matchAll(PATH_IN_CODE)) {
          const mentioned = match[1]!.replace(/[.,:;]+$/, '');
          if (!existsSync(join(ROOT, mentioned))) missing.push(`${name(path)}: ${mentioned}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it('every `npm run` script the Markdown names is in package.json', () => {
    const scripts = Object.keys(JSON.parse(read(join(ROOT, 'package.json'))).scripts as Record<string, string>);
    const unknown = MARKDOWN.flatMap((path) =>
      [...read(path).matchAll(/\bnpm run (?:-s )?([\w:-]+)/g)]
        .map((match) => match[1]!)
        .filter((script) => !scripts.includes(script))
        .map((script) => `${name(path)}: npm run ${script}`),
    );
    expect(unknown).toEqual([]);
  });
});

describe('source comments', () => {
  it('point to no document outside the repository', () => {
    expect(SOURCES.flatMap((path) => outsideReferences(path, read(path)))).toEqual([]);
  });
});
