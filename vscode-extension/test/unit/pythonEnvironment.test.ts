import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { interpreterPackages, parseListing } from '../../src/pythonEnvironment';

describe('the interpreter listing', () => {
  it("lists a real interpreter's packages by name and version", async () => {
    const listing = await interpreterPackages('python3');
    expect(listing.error).toBeNull();
    const pip = listing.packages.find((p) => p.name.toLowerCase() === 'pip');
    expect(pip?.version).toMatch(/^\d+\.\d+/);
  });

  it('gives up after its time limit and says so', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'greenloop-python-'));
    const slow = join(dir, 'python');
    writeFileSync(slow, '#!/bin/sh\nsleep 5\n');
    chmodSync(slow, 0o755);
    const listing = await interpreterPackages(slow, 300);
    expect(listing.packages).toEqual([]);
    expect(listing.error).toBe('pip list timed out after 0.3s');
  });

  it('keeps only rows with a string name and version', () => {
    const text = JSON.stringify([{ name: 'six', version: '1.16.0' }, { name: 'x' }, 'junk', { name: 1, version: '2' }]);
    expect(parseListing(text)).toEqual([{ name: 'six', version: '1.16.0' }]);
    expect(parseListing('not json')).toEqual([]);
  });
});
