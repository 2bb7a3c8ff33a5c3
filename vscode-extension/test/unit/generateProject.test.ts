import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { slugify, targetProblem } from '../../src/generateProject';

describe('slugify', () => {
  it('names the folder after the prompt\'s first meaningful words', () => {
    expect(slugify('A command-line tool that counts words in text files')).toBe('command-line-tool-counts');
    expect(slugify('!!!')).toBe('greenloop-project');
  });
});

describe('targetProblem', () => {
  const base = mkdtempSync(join(tmpdir(), 'gl-target-'));

  it('accepts an absent folder or an empty one', async () => {
    expect(await targetProblem(join(base, 'new'))).toBeUndefined();
    mkdirSync(join(base, 'empty'));
    expect(await targetProblem(join(base, 'empty'))).toBeUndefined();
  });

  it('refuses relative paths, files and non-empty folders', async () => {
    expect(await targetProblem('relative/dir')).toMatch(/absolute/);
    expect(await targetProblem('  ')).toMatch(/Enter a folder/);
    writeFileSync(join(base, 'file'), 'x');
    expect(await targetProblem(join(base, 'file'))).toMatch(/file with that name/);
    mkdirSync(join(base, 'full'));
    writeFileSync(join(base, 'full', 'a.py'), 'x');
    expect(await targetProblem(join(base, 'full'))).toMatch(/not empty/);
  });
});
