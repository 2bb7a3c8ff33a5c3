// The interpreter of the active Python environment (the ms-python extension's API), its changes, and its package listing.

import { execFile } from 'node:child_process';
import * as vscode from 'vscode';
import type { InterpreterPackagesParams, PackageVersion } from './protocol';

interface EnvironmentPath {
  id: string;
  path: string;
}

/** `ActiveEnvironmentPathChangeEvent` of the Python extension's API: which environment, and for what. */
export interface ActiveEnvironmentChange extends EnvironmentPath {
  /** The folder (or file) whose environment changed; undefined: the window's own. */
  readonly resource: vscode.WorkspaceFolder | vscode.Uri | undefined;
}

interface PythonExtensionApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): EnvironmentPath;
    resolveEnvironment(env: EnvironmentPath): Promise<{ executable: { uri?: vscode.Uri } } | undefined>;
    /** Fired when the user picks another interpreter (absent in releases before the environments API). */
    readonly onDidChangeActiveEnvironmentPath?: vscode.Event<ActiveEnvironmentChange>;
  };
  settings?: {
    getExecutionDetails(resource?: vscode.Uri): { execCommand: string[] | undefined };
  };
}

const PYTHON_EXTENSION_ID = 'ms-python.python';

/** The Python extension's API, activated; undefined when the extension is not installed (activation may throw). */
async function pythonExtensionApi(): Promise<PythonExtensionApi | undefined> {
  const extension = vscode.extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION_ID);
  if (!extension) return undefined;
  return extension.isActive ? extension.exports : await extension.activate();
}

/** The active interpreter's path, or undefined (no Python extension, or no environment). */
export async function activePythonInterpreter(resource?: vscode.Uri): Promise<string | undefined> {
  try {
    const api = await pythonExtensionApi();
    if (!api) return undefined;
    if (api.environments) {
      const envPath = api.environments.getActiveEnvironmentPath(resource);
      const resolved = await api.environments.resolveEnvironment(envPath);
      const executable = resolved?.executable.uri?.fsPath;
      if (executable) return executable;
    }
    const command = api.settings?.getExecutionDetails(resource).execCommand;
    return command && command.length === 1 ? command[0] : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Calls `listener` whenever the Python extension's active environment changes (for any folder: the change says
 * which). Returns the subscription, or why there is none (no Python extension, one too old to say, one that did not
 * start); never throws.
 */
export async function watchActiveInterpreter(
  listener: (change: ActiveEnvironmentChange) => void,
): Promise<vscode.Disposable | string> {
  const fromFiles = "the sandbox's versions come from the project's files";
  let api: PythonExtensionApi | undefined;
  try {
    api = await pythonExtensionApi();
  } catch (error) {
    return `the Python extension (${PYTHON_EXTENSION_ID}) did not start (${String(error)}): ${fromFiles}`;
  }
  if (!api) return `no Python extension (${PYTHON_EXTENSION_ID}): ${fromFiles}, not an interpreter's`;
  const event = api.environments?.onDidChangeActiveEnvironmentPath;
  const once = "the interpreter's packages are listed when the server starts only";
  if (!event) return `this Python extension does not say when the interpreter changes: ${once}`;
  try {
    return event(listener);
  } catch (error) {
    return `the Python extension's interpreter changes cannot be followed (${String(error)}): ${once}`;
  }
}

/** How long `pip list` may take in the user's interpreter before the listing is given up (ms). */
export const LISTING_TIMEOUT_MS = 20_000;

/**
 * The installed packages of `interpreter` (`-m pip list --format json`), for the sandbox's versions of the
 * project's declared packages. Only names and versions cross over; nothing runs there beyond the listing.
 * A listing that fails or times out gives its reason in `error` (the server says it and falls back).
 */
export function interpreterPackages(
  interpreter: string,
  timeoutMs: number = LISTING_TIMEOUT_MS,
): Promise<InterpreterPackagesParams> {
  const argv = ['-m', 'pip', 'list', '--format', 'json', '--disable-pip-version-check'];
  return new Promise((resolve) => {
    execFile(interpreter, argv, { timeout: timeoutMs, maxBuffer: 8 << 20, windowsHide: true }, (error, stdout) => {
      if (error) {
        const why = error.killed ? `pip list timed out after ${timeoutMs / 1000}s` : `pip list failed: ${error.message}`;
        resolve({ interpreter, packages: [], error: why.slice(0, 300) });
        return;
      }
      resolve({ interpreter, packages: parseListing(stdout), error: null });
    });
  });
}

/** `pip list --format json` output -> names and versions; anything else in it is dropped. */
export function parseListing(text: string): PackageVersion[] {
  let rows: unknown;
  try {
    rows = JSON.parse(text);
  } catch {
    return [];
  }
  if (!Array.isArray(rows)) return [];
  return rows.flatMap((row: unknown) => {
    if (typeof row !== 'object' || row === null) return [];
    const { name, version } = row as { name?: unknown; version?: unknown };
    return typeof name === 'string' && typeof version === 'string' ? [{ name, version }] : [];
  });
}
