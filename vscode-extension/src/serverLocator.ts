// Finds the command that starts `greenloop serve`: setting, active Python, PATH.

import { execFile } from 'node:child_process';
import { constants as fsConstants, promises as fs } from 'node:fs';
import * as path from 'node:path';

export interface ServerCommand {
  command: string;
  args: string[];
  /** Where it was found, for the log: "setting", "python extension", "PATH". */
  source: string;
}

export interface LocatorDeps {
  /** `greenloop.server.path`, '' when unset. */
  settingPath: string;
  /** The interpreter of the ms-python extension's active environment, if any. */
  activePython: () => Promise<string | undefined>;
  /** The process environment (PATH is searched). */
  env: NodeJS.ProcessEnv;
  /** True when `command args` exits 0 (within a time limit). */
  probe: (command: string, args: string[]) => Promise<boolean>;
  isExecutable: (file: string) => Promise<boolean>;
  platform: NodeJS.Platform;
}

export class ServerNotFoundError extends Error {
  constructor(
    message: string,
    readonly tried: string[],
    /** True when `greenloop.server.path` is set but wrong (a setting to fix, not a package to install). */
    readonly fromSetting = false,
  ) {
    super(message);
    this.name = 'ServerNotFoundError';
  }
}

/**
 * The one command that installs the daemon, shown in messages and typed by "Install".
 * pipx puts `greenloop` on PATH in its own environment. Until greenloop is on PyPI, install the
 * built wheel instead (`pipx install dist/greenloop-*.whl`, see the README); change it only here.
 */
export const INSTALL_COMMAND = 'pipx install greenloop';

export const INSTALL_HINT =
  `Install it with \`${INSTALL_COMMAND}\` (or \`python3 -m pip install greenloop\` into your Python environment), ` +
  'then run "Greenloop: Restart Server"; ' +
  'or set `greenloop.server.path` to the `greenloop` executable or to a Python that has greenloop installed.';

const IMPORT_CHECK = ['-c', 'import greenloop'];

export function isPythonName(file: string): boolean {
  return /^python[0-9.]*(\.exe)?$/i.test(file.split(/[\\/]/).pop() ?? '');
}

function pythonServer(python: string, source: string): ServerCommand {
  return { command: python, args: ['-m', 'greenloop', 'serve'], source };
}

/** Every `name` (with `.exe` on Windows) found on PATH, in PATH order. */
export async function whichAll(name: string, deps: Pick<LocatorDeps, 'env' | 'isExecutable' | 'platform'>): Promise<string[]> {
  const sep = deps.platform === 'win32' ? ';' : ':';
  const exts = deps.platform === 'win32' ? ['.exe', '.cmd', ''] : [''];
  const found: string[] = [];
  for (const dir of (deps.env.PATH ?? deps.env.Path ?? '').split(sep)) {
    if (!dir) continue;
    for (const ext of exts) {
      const file = path.join(dir, name + ext);
      if (!found.includes(file) && (await deps.isExecutable(file))) found.push(file);
    }
  }
  return found;
}

async function fromSetting(deps: LocatorDeps): Promise<ServerCommand> {
  const file = deps.settingPath;
  if (!(await deps.isExecutable(file))) {
    throw new ServerNotFoundError(
      `greenloop.server.path is "${file}", which is not an executable file. Fix the setting or clear it.`,
      [file],
      true,
    );
  }
  if (isPythonName(file)) {
    if (await deps.probe(file, IMPORT_CHECK)) return pythonServer(file, 'setting greenloop.server.path');
    throw new ServerNotFoundError(
      `greenloop.server.path is the Python "${file}", but greenloop is not installed in it: ` +
        `run \`"${file}" -m pip install greenloop\`.`,
      [file],
      true,
    );
  }
  return { command: file, args: ['serve'], source: 'setting greenloop.server.path' };
}

/** The server command, or a ServerNotFoundError whose message says what to install. */
export async function locateServer(deps: LocatorDeps): Promise<ServerCommand> {
  if (deps.settingPath) return fromSetting(deps);
  const tried: string[] = [];
  const active = await deps.activePython();
  if (active) {
    tried.push(`${active} (active Python environment)`);
    if (await deps.probe(active, IMPORT_CHECK)) return pythonServer(active, 'active Python environment');
  }
  for (const exe of await whichAll('greenloop', deps)) {
    tried.push(exe);
    if (await deps.probe(exe, ['--version'])) return { command: exe, args: ['serve'], source: 'PATH' };
  }
  const pythons = deps.platform === 'win32' ? ['python', 'py'] : ['python3', 'python'];
  for (const name of pythons) {
    for (const exe of await whichAll(name, deps)) {
      tried.push(exe);
      if (await deps.probe(exe, IMPORT_CHECK)) return pythonServer(exe, 'PATH');
    }
  }
  const triedText = tried.length ? ` Tried: ${tried.join(', ')}.` : ' No Python was found on PATH.';
  throw new ServerNotFoundError(`Greenloop could not find its language server (greenloop). ${INSTALL_HINT}${triedText}`, tried);
}

/** The real probe: run the command, true when it exits 0 within 20 seconds. */
export function probeCommand(command: string, args: string[]): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(command, args, { timeout: 20_000, windowsHide: true }, (error) => resolve(!error));
  });
}

export async function isExecutableFile(file: string): Promise<boolean> {
  try {
    const stat = await fs.stat(file);
    if (!stat.isFile()) return false;
    await fs.access(file, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}
