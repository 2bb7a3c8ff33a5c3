import { describe, expect, it, vi } from 'vitest';
import * as vscode from 'vscode';
import { FolderServers, type FolderServer } from '../../src/folderServers';
import {
  DISMISSED_KEY,
  DONT_SHOW_AGAIN,
  INSTALL,
  MISSING_SERVER_MESSAGE,
  MissingServerNotice,
  openInstallTerminal,
} from '../../src/missingServerNotice';
import { INSTALL_COMMAND } from '../../src/serverLocator';

/** A Memento like VS Code's globalState: values survive as long as the object (one user profile). */
class Memento {
  readonly values = new Map<string, unknown>();
  get<T>(key: string, fallback?: T): T {
    return (this.values.has(key) ? this.values.get(key) : fallback) as T;
  }
  async update(key: string, value: unknown): Promise<void> {
    this.values.set(key, value);
  }
}

function notice(globalState: Memento, pick: string | undefined) {
  const show = vi.fn(async (..._args: string[]) => pick);
  const install = vi.fn();
  return { show, install, notice: new MissingServerNotice({ globalState, show, install, log: () => undefined }) };
}

const folder = (name: string, index: number) => ({ uri: vscode.Uri.file(`/ws/${name}`), name, index }) as unknown as vscode.WorkspaceFolder;

/** A folder's server that finds no daemon, as GreenloopServer does: it reports to the window's notice. */
function missingServer(report: () => void) {
  return (f: vscode.WorkspaceFolder | undefined): FolderServer => ({
    folder: f,
    isRunning: false,
    start: async () => report(),
    stop: async () => undefined,
    restart: async () => report(),
    sendFeedback: () => Promise.reject(new Error('not running')),
    dispose: () => undefined,
  });
}

describe('MissingServerNotice', () => {
  it('is shown once for a window whose three folders all miss the daemon', async () => {
    const { show, notice: n } = notice(new Memento(), undefined);
    const reports: Promise<void>[] = [];
    const create = missingServer(() => reports.push(n.report()));
    const servers = new FolderServers({ create, attach: () => ({ dispose: () => undefined }) }, [
      folder('a', 0), folder('b', 1), folder('c', 2),
    ]);
    await servers.restartAll();
    await Promise.all(reports);
    expect(reports).toHaveLength(6);
    expect(show).toHaveBeenCalledTimes(1);
    expect(show).toHaveBeenCalledWith(MISSING_SERVER_MESSAGE, INSTALL, DONT_SHOW_AGAIN);
  });

  it('names the one install command, pipx', () => {
    expect(INSTALL_COMMAND).toBe('pipx install greenloop');
    expect(MISSING_SERVER_MESSAGE).toContain('`pipx install greenloop`');
  });

  it('"Don\'t Show Again" is kept in globalState: the next window stays quiet', async () => {
    const globalState = new Memento();
    const first = notice(globalState, DONT_SHOW_AGAIN);
    await first.notice.report();
    expect(globalState.values.get(DISMISSED_KEY)).toBe(true);
    expect(first.install).not.toHaveBeenCalled();

    const next = notice(globalState, undefined);
    await next.notice.report();
    expect(next.show).not.toHaveBeenCalled();
    expect(next.notice.dismissed).toBe(true);
  });

  it('closing the notice does not dismiss it for good: the next window shows it again', async () => {
    const globalState = new Memento();
    await notice(globalState, undefined).notice.report();
    const next = notice(globalState, undefined);
    await next.notice.report();
    expect(next.show).toHaveBeenCalledTimes(1);
  });

  it('"Install" runs the install command in a terminal', async () => {
    const { install, notice: n } = notice(new Memento(), INSTALL);
    await n.report();
    expect(install).toHaveBeenCalledTimes(1);

    openInstallTerminal();
    const terminal = vi.mocked(vscode.window.createTerminal).mock.results[0].value as { show: () => void; sendText: (t: string) => void };
    expect(terminal.show).toHaveBeenCalled();
    expect(terminal.sendText).toHaveBeenCalledWith(INSTALL_COMMAND);
  });
});
