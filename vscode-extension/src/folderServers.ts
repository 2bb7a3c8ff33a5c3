// One greenloop server per workspace folder (the lsp-sample multi-root pattern), kept in step with the folders.

import type * as vscode from 'vscode';
import type { FeedbackParams, FeedbackResult } from './protocol';

/** What this module needs of a folder's server (GreenloopServer; a fake in the unit tests). */
export interface FolderServer extends vscode.Disposable {
  /** undefined: the window has no folder (Generate Project still works). */
  readonly folder: vscode.WorkspaceFolder | undefined;
  readonly isRunning: boolean;
  start(silent?: boolean): Promise<void>;
  stop(): Promise<void>;
  restart(): Promise<void>;
  sendFeedback(params: FeedbackParams): Promise<FeedbackResult>;
}

export interface FolderServersDeps<S extends FolderServer> {
  create(folder: vscode.WorkspaceFolder | undefined): S;
  /** Subscriptions to a new server's events; disposed when its folder goes. */
  attach(server: S): vscode.Disposable;
}

/** The key of a folder's server ('' for a window without folders). */
export function folderKey(folder: vscode.WorkspaceFolder | undefined): string {
  return folder ? folder.uri.toString() : '';
}

/** The documents a folder's client handles: files under that folder only (so two clients never share one). */
export function folderDocumentSelector(folder: vscode.WorkspaceFolder | undefined): { scheme: string; pattern?: string }[] {
  if (!folder) return [{ scheme: 'file' }];
  const root = folder.uri.fsPath.replace(/\\/g, '/').replace(/\/$/, '');
  return [{ scheme: 'file', pattern: `${root}/**/*` }];
}

export class FolderServers<S extends FolderServer> implements vscode.Disposable {
  private readonly entries = new Map<string, { server: S; subscriptions: vscode.Disposable }>();

  constructor(
    private readonly deps: FolderServersDeps<S>,
    folders: readonly vscode.WorkspaceFolder[] | undefined,
  ) {
    this.add(folders?.length ? folders : [undefined]);
  }

  get all(): S[] {
    return [...this.entries.values()].map((e) => e.server);
  }

  /** Starts every folder's server (at activation, and when the workspace becomes trusted). */
  async startAll(): Promise<void> {
    await Promise.all(this.all.map((s) => s.start()));
  }

  async restartAll(): Promise<void> {
    await Promise.all(this.all.map((s) => s.restart()));
  }

  /** Folders added or removed at runtime: their servers are created and started, or stopped. */
  async change(event: { added: readonly vscode.WorkspaceFolder[]; removed: readonly vscode.WorkspaceFolder[] }): Promise<void> {
    const started = this.add(event.added);
    const stopped = event.removed.map((f) => this.remove(folderKey(f)));
    const hasFolders = [...this.entries.keys()].some((key) => key !== '');
    if (hasFolders) stopped.push(this.remove(''));
    else if (!this.entries.has('')) started.push(...this.add([undefined]));
    await Promise.all([...started, ...stopped]);
  }

  /** The server of the folder that holds `uri` (the innermost one when folders nest). */
  forUri(uri: vscode.Uri): S | undefined {
    const target = uri.toString();
    let best: { key: string; server: S } | undefined;
    for (const [key, { server }] of this.entries) {
      const inside = key === '' || target === key || target.startsWith(key.endsWith('/') ? key : `${key}/`);
      if (inside && (!best || key.length > best.key.length)) best = { key, server };
    }
    return best?.server;
  }

  /** Feedback goes to the server of the folder the commented file is in. */
  sendFeedback(params: FeedbackParams, parse: (uri: string) => vscode.Uri): Promise<FeedbackResult> {
    const server = this.forUri(parse(params.uri));
    if (!server) return Promise.reject(new Error(`Greenloop: ${params.uri} is not in a workspace folder.`));
    return server.sendFeedback(params);
  }

  dispose(): void {
    for (const key of [...this.entries.keys()]) void this.remove(key);
  }

  private add(folders: readonly (vscode.WorkspaceFolder | undefined)[]): Promise<void>[] {
    const started: Promise<void>[] = [];
    for (const folder of folders) {
      const key = folderKey(folder);
      if (this.entries.has(key)) continue;
      const server = this.deps.create(folder);
      this.entries.set(key, { server, subscriptions: this.deps.attach(server) });
      started.push(server.start());
    }
    return started;
  }

  private async remove(key: string): Promise<void> {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    entry.subscriptions.dispose();
    await entry.server.stop();
    entry.server.dispose();
  }
}
