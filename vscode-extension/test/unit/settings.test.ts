import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { explicitServerConfig, serverKeys, serverPathSetting, type ConfigurationReader } from '../../src/settings';
// @ts-expect-error: a plain .mjs build script without type declarations
import { configurationProperties, readServerSchema } from '../../scripts/sync-settings.mjs';

type Levels = { globalValue?: unknown; workspaceValue?: unknown; workspaceFolderValue?: unknown };

function reader(values: Record<string, Levels>, plain: Record<string, unknown> = {}): ConfigurationReader {
  return {
    get: <T>(key: string) => plain[key] as T | undefined,
    inspect: <T>(key: string) => values[key] as { globalValue?: T } | undefined,
  };
}

const packageJson = JSON.parse(readFileSync(join(__dirname, '../../package.json'), 'utf8'));
const declared: Record<string, unknown> = packageJson.contributes.configuration.properties;

describe('serverKeys', () => {
  it('drops the client-only server.* keys and the section prefix', () => {
    const keys = serverKeys(['greenloop.server.path', 'greenloop.llm.model', 'greenloop.runTestsOnSave', 'other.x']);
    expect(keys).toEqual(['llm.model', 'runTestsOnSave']);
  });
});

describe('explicitServerConfig', () => {
  it('sends only values the user set, nested, the most specific level winning', () => {
    const config = reader({
      'llm.model': { globalValue: 'gpt-4o-mini', workspaceValue: 'qwen' },
      'llm.baseUrl': { globalValue: '' },
      'loop.maxIterations': { workspaceFolderValue: 3, globalValue: 9 },
      'sandbox.backend': {},
      runTestsOnSave: { globalValue: true },
    });
    const keys = ['llm.baseUrl', 'llm.model', 'loop.maxIterations', 'runTestsOnSave', 'sandbox.backend'];
    expect(explicitServerConfig(config, keys)).toEqual({
      llm: { model: 'qwen' },
      loop: { maxIterations: 3 },
      runTestsOnSave: true,
    });
  });

  it('is empty when nothing is set, so greenloop.toml and the environment decide', () => {
    expect(explicitServerConfig(reader({}), serverKeys(Object.keys(declared)))).toEqual({});
  });
});

describe('serverPathSetting', () => {
  it('trims the setting', () => {
    expect(serverPathSetting(reader({}, { 'server.path': '  /usr/bin/greenloop ' }))).toBe('/usr/bin/greenloop');
    expect(serverPathSetting(reader({}))).toBe('');
  });
});

describe('package.json settings', () => {
  it('mirror server/greenloop/settings.py (run `npm run sync-settings` after changing it)', () => {
    const wanted = configurationProperties(readServerSchema());
    expect(declared).toEqual(wanted);
  });

  it('never offer the API key as a setting', () => {
    expect(Object.keys(declared).filter((k) => /api.?key/i.test(k))).toEqual([]);
  });
});
