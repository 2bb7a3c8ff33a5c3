import { describe, expect, it } from 'vitest';
import type * as vscode from 'vscode';
import { API_KEY_SECRET, ApiKeyStore, serverEnvironment } from '../../src/apiKey';

function secrets() {
  const data = new Map<string, string>();
  const listeners: ((e: { key: string }) => void)[] = [];
  const storage = {
    get: async (key: string) => data.get(key),
    store: async (key: string, value: string) => {
      data.set(key, value);
      listeners.forEach((l) => l({ key }));
    },
    delete: async (key: string) => {
      data.delete(key);
      listeners.forEach((l) => l({ key }));
    },
    onDidChange: (l: (e: { key: string }) => void) => {
      listeners.push(l);
      return { dispose: () => undefined };
    },
  };
  return { data, storage: storage as unknown as vscode.SecretStorage };
}

describe('ApiKeyStore', () => {
  it('stores a trimmed key in secret storage, and an empty one removes it', async () => {
    const { data, storage } = secrets();
    const store = new ApiKeyStore(storage);
    let changes = 0;
    store.onDidChange(() => changes++);
    await store.set('  sk-123 ');
    expect(data.get(API_KEY_SECRET)).toBe('sk-123');
    expect(await store.get()).toBe('sk-123');
    await store.set('');
    expect(data.has(API_KEY_SECRET)).toBe(false);
    expect(changes).toBe(2);
  });
});

describe('serverEnvironment', () => {
  it('adds the key as GREENLOOP_LLM__API_KEY without touching the base environment', () => {
    const base = { PATH: '/usr/bin' };
    expect(serverEnvironment(base, 'sk-1')).toEqual({ PATH: '/usr/bin', GREENLOOP_LLM__API_KEY: 'sk-1' });
    expect(serverEnvironment(base, undefined)).toEqual({ PATH: '/usr/bin' });
    expect(base).toEqual({ PATH: '/usr/bin' });
  });
});
