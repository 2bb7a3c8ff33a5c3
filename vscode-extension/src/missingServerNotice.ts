// The one notice that the greenloop daemon is missing: once per window, never after "Don't Show Again".

import * as vscode from 'vscode';
import { INSTALL_COMMAND } from './serverLocator';

/** globalState key: the user chose "Don't Show Again" (kept across windows and restarts). */
export const DISMISSED_KEY = 'greenloop.missingServerNotice.dismissed';
export const INSTALL = 'Install';
export const DONT_SHOW_AGAIN = "Don't Show Again";
export const MISSING_SERVER_MESSAGE =
  'Greenloop needs its language server, the greenloop Python package, and could not find it. ' +
  `Install it with \`${INSTALL_COMMAND}\`, then run "Greenloop: Restart Server" ` +
  '(or set greenloop.server.path). Details are in the Greenloop output.';

export interface NoticeDeps {
  globalState: Pick<vscode.Memento, 'get' | 'update'>;
  /** A non-modal warning with buttons (vscode.window.showWarningMessage). */
  show(message: string, ...items: string[]): Thenable<string | undefined>;
  /** Opens a terminal running INSTALL_COMMAND. */
  install(): void;
  log(text: string): void;
}

export class MissingServerNotice {
  private shown = false;

  constructor(private readonly deps: NoticeDeps) {}

  get dismissed(): boolean {
    return this.deps.globalState.get<boolean>(DISMISSED_KEY, false);
  }

  /**
   * Called by every folder's server that found no daemon: the first call of the window shows
   * the notice, later ones (other folders, restarts) only log.
   */
  async report(): Promise<void> {
    if (this.shown || this.dismissed) {
      this.deps.log(`greenloop server not found; not notifying again (${this.dismissed ? 'dismissed' : 'already shown'})`);
      return;
    }
    this.shown = true;
    const pick = await this.deps.show(MISSING_SERVER_MESSAGE, INSTALL, DONT_SHOW_AGAIN);
    if (pick === INSTALL) this.deps.install();
    if (pick === DONT_SHOW_AGAIN) {
      await this.deps.globalState.update(DISMISSED_KEY, true);
      this.deps.log("greenloop server not found: the notice is dismissed (Don't Show Again)");
    }
  }
}

/** "Install": a terminal that runs the install command, where the user sees it and its output. */
export function openInstallTerminal(): void {
  const terminal = vscode.window.createTerminal({ name: 'Install greenloop' });
  terminal.show();
  terminal.sendText(INSTALL_COMMAND);
}
