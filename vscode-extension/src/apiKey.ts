// The LLM API key: kept in VS Code's SecretStorage, handed to the server as an environment variable.

import type * as vscode from 'vscode';
export const API_KEY_SECRET = 'greenloop.llm.apiKey';
/** The environment variable the server reads `llm.api_key` from (never settings.json, never logged). */
export const API_KEY_ENV = 'GREENLOOP_LLM__API_KEY';

export class ApiKeyStore {
  constructor(private readonly secrets: vscode.SecretStorage) {}

  get(): Thenable<string | undefined> {
    return this.secrets.get(API_KEY_SECRET);
  }

  /** Stores the key; an empty key removes it. */
  async set(value: string): Promise<void> {
    const key = value.trim();
    if (key) await this.secrets.store(API_KEY_SECRET, key);
    else await this.secrets.delete(API_KEY_SECRET);
  }

  onDidChange(listener: () => unknown): vscode.Disposable {
    return this.secrets.onDidChange((event) => {
      if (event.key === API_KEY_SECRET) listener();
    });
  }
}

/** The server's environment: the extension host's, plus the API key when one is stored. */
export function serverEnvironment(base: NodeJS.ProcessEnv, apiKey: string | undefined): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base };
  if (apiKey) env[API_KEY_ENV] = apiKey;
  return env;
}
