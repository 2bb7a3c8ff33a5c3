import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(__dirname, '../..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

describe('package.json (marketplace manifest)', () => {
  it('activates only where there is a test setup, or on a command', () => {
    const events: string[] = pkg.activationEvents;
    expect(events.filter((e) => !/^(workspaceContains|onCommand|onWalkthrough):/.test(e))).toEqual([]);
    for (const setup of ['**/greenloop.toml', '**/test_*.py', '**/conftest.py', 'Cargo.toml', '**/*.test.{js,mjs,cjs,ts,mts}']) {
      expect(events).toContain(`workspaceContains:${setup}`);
    }
    const palette: string[] = pkg.contributes.commands
      .map((c: { command: string }) => c.command)
      .filter((id: string) => !id.startsWith('greenloop.feedback.') && id !== 'greenloop.cancel');
    for (const id of palette) expect(events).toContain(`onCommand:${id}`);
  });

  it('has an icon (a 128x128 PNG), categories, keywords and a changelog', () => {
    const icon = readFileSync(join(root, pkg.icon));
    expect(icon.subarray(1, 4).toString()).toBe('PNG');
    expect([icon.readUInt32BE(16), icon.readUInt32BE(20)]).toEqual([128, 128]);
    expect(pkg.categories).toEqual(expect.arrayContaining(['AI', 'Testing']));
    expect(pkg.keywords.length).toBeGreaterThan(3);
    expect(pkg.keywords.length).toBeLessThanOrEqual(30);
    expect(existsSync(join(root, 'CHANGELOG.md'))).toBe(true);
  });

  it('the walkthrough installs the daemon, picks a model and fixes a failing test, with its media packaged', () => {
    const [walkthrough] = pkg.contributes.walkthroughs;
    expect(walkthrough.steps.map((s: { id: string }) => s.id)).toEqual(['installServer', 'pickModel', 'fixTest']);
    const ignore = readFileSync(join(root, '.vscodeignore'), 'utf8');
    for (const step of walkthrough.steps) {
      expect(existsSync(join(root, step.media.markdown))).toBe(true);
    }
    expect(ignore).toContain('!media/walkthrough/*.md');
    expect(ignore).toContain(`!${pkg.icon}`);
  });
});
