// The `greenloop.*` settings: which ones the server sees, and the client-only ones.

/** The slice of `vscode.WorkspaceConfiguration` this module needs. */
export interface ConfigurationReader {
  get<T>(key: string): T | undefined;
  inspect<T>(key: string):
    | { globalValue?: T; workspaceValue?: T; workspaceFolderValue?: T }
    | undefined;
}

export const SECTION = 'greenloop';

/** Keys under `greenloop.` that only the client reads; the server ignores them. */
const CLIENT_ONLY_PREFIXES = ['server.', 'trace.'];

/** `greenloop.x.y` keys declared in package.json -> `x.y` keys the server understands. */
export function serverKeys(declared: Iterable<string>): string[] {
  const keys: string[] = [];
  for (const full of declared) {
    if (!full.startsWith(`${SECTION}.`)) continue;
    const key = full.slice(SECTION.length + 1);
    if (CLIENT_ONLY_PREFIXES.some((p) => key.startsWith(p))) continue;
    keys.push(key);
  }
  return keys.sort();
}

function isSet(value: unknown): boolean {
  return value !== undefined && value !== null && value !== '';
}

/**
 * The object answered to the server's `workspace/configuration` pull for
 * section `greenloop`: only values the user set (user, workspace or folder
 * level), nested by key, so the server's own config file and environment
 * keep deciding everything else.
 */
export function explicitServerConfig(
  config: ConfigurationReader,
  keys: readonly string[],
): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const key of keys) {
    const inspected = config.inspect<unknown>(key);
    if (!inspected) continue;
    const { globalValue, workspaceValue, workspaceFolderValue } = inspected;
    const value = [workspaceFolderValue, workspaceValue, globalValue].find(isSet);
    if (value === undefined) continue;
    setPath(result, key.split('.'), value);
  }
  return result;
}

function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  let node = target;
  for (const part of path.slice(0, -1)) {
    const child = node[part];
    if (typeof child !== 'object' || child === null) node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[path[path.length - 1]] = value;
}

/** `greenloop.server.path`, trimmed; '' when unset. */
export function serverPathSetting(config: ConfigurationReader): string {
  return (config.get<string>('server.path') ?? '').trim();
}
