// Sends one folder's server the active interpreter's package listing: when the server starts, and again each time
// the user picks another interpreter, so the next fix run's sandbox has that interpreter's versions.

import * as vscode from 'vscode';
import type { InterpreterPackagesParams } from './protocol';
import {
  LISTING_TIMEOUT_MS,
  activePythonInterpreter,
  interpreterPackages,
  watchActiveInterpreter,
  type ActiveEnvironmentChange,
} from './pythonEnvironment';

/** Where lines about the listing go (the output channel). */
export interface ListingLog {
  info(line: string): void;
  warn(line: string): void;
}

/**
 * The listing of one server's client, alive as long as that client: `dispose()` ends the subscription to interpreter
 * changes and drops a listing still being made. Only the newest listing is sent: one made for an interpreter the user
 * has since left is dropped. Nothing here throws: a missing Python extension, or a listing that fails or times out,
 * is a line in the log (the server is told the reason, and its environment step falls back to the project's files).
 */
export class InterpreterListing implements vscode.Disposable {
  private newest = 0; // the number of the newest listing begun
  private subscription: vscode.Disposable | undefined;
  private disposed = false;

  constructor(
    private readonly folder: vscode.WorkspaceFolder | undefined,
    private readonly send: (listing: InterpreterPackagesParams) => Promise<void>,
    private readonly log: ListingLog,
    private readonly label: string,
    private readonly timeoutMs: number = LISTING_TIMEOUT_MS,
  ) {}

  /** Follow the interpreter's changes and send the listing now; resolves once that listing is sent or dropped. */
  async start(): Promise<void> {
    const watch = await watchActiveInterpreter((change) => {
      if (!this.disposed && this.concerns(change)) void this.relist(true);
    });
    if (typeof watch === 'string') {
      this.log.info(`${this.label}: ${watch}`);
    } else if (this.disposed) {
      watch.dispose();
      return;
    } else {
      this.subscription = watch;
    }
    await this.relist(false);
  }

  dispose(): void {
    this.disposed = true;
    this.newest += 1;
    this.subscription?.dispose();
    this.subscription = undefined;
  }

  /** The change is this folder's (or the window's, which a folder without its own follows). */
  private concerns(change: ActiveEnvironmentChange): boolean {
    const resource = change.resource;
    if (!resource || !this.folder) return true;
    const uri = 'uri' in resource ? resource.uri : resource;
    return vscode.workspace.getWorkspaceFolder(uri)?.uri.toString() === this.folder.uri.toString();
  }

  private async relist(changed: boolean): Promise<void> {
    const mine = ++this.newest;
    try {
      const interpreter = await activePythonInterpreter(this.folder?.uri);
      if (mine !== this.newest) return;
      if (!interpreter) {
        if (!changed) return; // nothing was sent, so nothing to take back
        this.log.warn(`${this.label}: the Python extension names no interpreter now; its packages are no longer used`);
        await this.send({ interpreter: 'none', packages: [], error: 'the Python extension names no interpreter' });
        return;
      }
      const listing = await interpreterPackages(interpreter, this.timeoutMs);
      if (mine !== this.newest) return; // another interpreter was picked meanwhile, or the client stopped
      if (listing.error) {
        this.log.warn(`${this.label}: no package listing of ${interpreter} (${listing.error}); ` +
          "the sandbox's versions come from the project's files");
      } else if (changed) {
        this.log.info(`${this.label}: interpreter changed to ${interpreter}: ${listing.packages.length} packages ` +
          'listed for the next fix run');
      }
      await this.send(listing);
    } catch (error) {
      this.log.warn(`${this.label}: the interpreter's packages were not sent: ${String(error)}`);
    }
  }
}
