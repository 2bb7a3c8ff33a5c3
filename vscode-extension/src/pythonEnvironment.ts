// The interpreter of the active Python environment, through the ms-python extension's API.

import * as vscode from 'vscode';

interface EnvironmentPath {
  id: string;
  path: string;
}

interface PythonExtensionApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): EnvironmentPath;
    resolveEnvironment(env: EnvironmentPath): Promise<{ executable: { uri?: vscode.Uri } } | undefined>;
  };
  settings?: {
    getExecutionDetails(resource?: vscode.Uri): { execCommand: string[] | undefined };
  };
}

const PYTHON_EXTENSION_ID = 'ms-python.python';

/** The active interpreter's path, or undefined (no Python extension, or no environment). */
export async function activePythonInterpreter(resource?: vscode.Uri): Promise<string | undefined> {
  const extension = vscode.extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION_ID);
  if (!extension) return undefined;
  try {
    const api = extension.isActive ? extension.exports : await extension.activate();
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
