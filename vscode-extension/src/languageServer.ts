// Starts, stops and talks to one workspace folder's `greenloop serve` through vscode-languageclient.

import * as vscode from 'vscode';
import {
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  State,
  type LanguageClientOptions,
  type ServerOptions,
  type StaticFeature,
  type DynamicFeature,
} from 'vscode-languageclient/node';
import { ApiKeyStore, serverEnvironment } from './apiKey';
import type { ServerState } from './loopStatus';
import {
  FEEDBACK,
  INTERPRETER_PACKAGES,
  LOOP_EVENT,
  TEST_RESULTS,
  type FeedbackParams,
  type FeedbackResult,
  type LoopEventParams,
  type ServerCommandTypes,
  type TestResultsParams,
} from './protocol';
import { folderDocumentSelector, type FolderServer } from './folderServers';
import { locateServer, probeCommand, isExecutableFile, ServerNotFoundError, type ServerCommand } from './serverLocator';
import { InterpreterListing } from './interpreterListing';
import { activePythonInterpreter } from './pythonEnvironment';
import { SECTION, explicitServerConfig, serverPathSetting } from './settings';
import { UNTRUSTED_MESSAGE } from './workspaceTrust';

/**
 * The client registers the palette commands itself (with argument defaults and
 * result messages), so the server's advertised command ids must not be
 * registered a second time by vscode-languageclient.
 */
class GreenloopLanguageClient extends LanguageClient {
  override registerFeature(feature: StaticFeature | DynamicFeature<unknown>): void {
    if ('registrationType' in feature && feature.registrationType.method === ExecuteCommandRequest.method) return;
    super.registerFeature(feature);
  }
}

export class ServerNotRunningError extends Error {}

export interface ServerContext {
  output: vscode.LogOutputChannel;
  apiKeys: ApiKeyStore;
  /** `greenloop.*` keys the server understands (from package.json, without `greenloop.`). */
  serverKeys: readonly string[];
  /** No daemon was found (not a wrong setting): the window's one notice decides whether to show it. */
  onMissing(): void;
  /** False in Restricted Mode: the server does not start. */
  isTrusted(): boolean;
  /** Folders in the window (names go into log lines and client names when there are several). */
  folderCount(): number;
}

/** The daemon of one workspace folder: its own process, settings (folder scope) and loop. */
export class GreenloopServer implements FolderServer {
  private client: LanguageClient | undefined;
  private listing: InterpreterListing | undefined; // the client's interpreter listing, disposed with it
  private pending: Promise<void> | undefined;
  private startError: string | undefined;
  private readonly stateEmitter = new vscode.EventEmitter<ServerState>();
  private readonly loopEmitter = new vscode.EventEmitter<LoopEventParams>();
  private readonly resultsEmitter = new vscode.EventEmitter<TestResultsParams>();
  private readonly disposables: vscode.Disposable[] = [this.stateEmitter, this.loopEmitter, this.resultsEmitter];
  readonly onDidChangeState = this.stateEmitter.event;
  readonly onLoopEvent = this.loopEmitter.event;
  /** `greenloop/testResults`: a test run the Testing view did not start (Run Tests, a save, a fix). */
  readonly onTestResults = this.resultsEmitter.event;

  constructor(
    private readonly ctx: ServerContext,
    readonly folder: vscode.WorkspaceFolder | undefined,
  ) {
    this.disposables.push(
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (!this.ctx.isTrusted()) return;
        if (event.affectsConfiguration(`${SECTION}.server`, this.folder)) void this.restart();
        else if (event.affectsConfiguration(SECTION, this.folder)) void this.notifyConfigurationChanged();
      }),
      ctx.apiKeys.onDidChange(() => void (this.ctx.isTrusted() && this.restart())),
    );
  }

  /** "Greenloop" alone; with several folders, "Greenloop (name)". */
  get label(): string {
    return this.folder && this.ctx.folderCount() > 1 ? `Greenloop (${this.folder.name})` : 'Greenloop';
  }

  get isRunning(): boolean {
    return this.client?.state === State.Running;
  }

  /** Starts the server; a missing server is reported to the user (unless `silent`), not thrown. */
  start(silent = false): Promise<void> {
    this.pending ??= this.doStart(silent).finally(() => (this.pending = undefined));
    return this.pending;
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.listing?.dispose();
    this.listing = undefined;
    if (client) {
      try {
        await client.stop(5000);
      } catch (error) {
        this.ctx.output.warn(`stopping the server: ${String(error)}`);
      }
    }
    this.stateEmitter.fire('stopped');
  }

  async restart(): Promise<void> {
    await this.pending;
    await this.stop();
    await this.start();
  }

  /** `workspace/executeCommand` with the single-object argument list of the contract. */
  async executeCommand<C extends keyof ServerCommandTypes>(
    command: C,
    arg: ServerCommandTypes[C]['args'],
  ): Promise<ServerCommandTypes[C]['result']> {
    const client = await this.runningClient();
    const result: unknown = await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: [arg] });
    return result as ServerCommandTypes[C]['result'];
  }

  async sendFeedback(params: FeedbackParams): Promise<FeedbackResult> {
    const client = await this.runningClient();
    return client.sendRequest<FeedbackResult>(FEEDBACK, params);
  }

  /** A custom `greenloop/*` request; cancelling `token` sends `$/cancelRequest` (the server stops the run). */
  async request<R>(method: string, params: unknown, token?: vscode.CancellationToken): Promise<R> {
    const client = await this.runningClient();
    return token ? client.sendRequest<R>(method, params, token) : client.sendRequest<R>(method, params);
  }

  /** For converting editor objects into protocol objects. */
  get code2Protocol(): LanguageClient['code2ProtocolConverter'] | undefined {
    return this.client?.code2ProtocolConverter;
  }

  dispose(): void {
    void this.stop();
    this.disposables.forEach((d) => d.dispose());
  }

  private async runningClient(): Promise<LanguageClient> {
    await this.pending;
    // Not found earlier: look again (greenloop may have been installed since); the caller shows the error.
    if (!this.client) await this.start(true);
    if (!this.client || this.client.state !== State.Running) {
      throw new ServerNotRunningError(
        this.startError ??
          'The greenloop language server is not running. See "Greenloop: Show Output", then "Greenloop: Restart Server".',
      );
    }
    return this.client;
  }

  private async doStart(silent: boolean): Promise<void> {
    if (!this.ctx.isTrusted()) {
      this.startError = UNTRUSTED_MESSAGE;
      this.stateEmitter.fire('untrusted');
      return;
    }
    this.stateEmitter.fire('starting');
    this.startError = undefined;
    let server: ServerCommand;
    try {
      server = await this.locate();
    } catch (error) {
      this.reportNotFound(error, silent);
      return;
    }
    this.ctx.output.info(`${this.label}: starting ${server.command} ${server.args.join(' ')} (found via ${server.source})`);
    const client = await this.createClient(server);
    this.client = client;
    try {
      await client.start();
      this.stateEmitter.fire('running');
      this.listing?.dispose();
      this.listing = new InterpreterListing(
        this.folder,
        (listing) => client.sendNotification(INTERPRETER_PACKAGES, listing),
        this.ctx.output,
        this.label,
      );
      void this.listing.start();
    } catch (error) {
      this.ctx.output.error(`${this.label}: the greenloop server did not start: ${String(error)}`);
      this.stateEmitter.fire('failed');
      void vscode.window
        .showErrorMessage(`${this.label}: the language server did not start (${String(error)}).`, 'Show Output')
        .then((pick) => pick && this.ctx.output.show());
    }
  }

  private locate(): Promise<ServerCommand> {
    const folder = this.folder?.uri;
    return locateServer({
      settingPath: serverPathSetting(vscode.workspace.getConfiguration(SECTION, folder)),
      activePython: () => activePythonInterpreter(folder),
      env: process.env,
      probe: probeCommand,
      isExecutable: isExecutableFile,
      platform: process.platform,
    });
  }

  private reportNotFound(error: unknown, silent: boolean): void {
    const message = error instanceof ServerNotFoundError ? error.message : `Greenloop: ${String(error)}`;
    this.startError = message;
    this.ctx.output.error(`${this.label}: ${message}`);
    this.stateEmitter.fire('notFound');
    if (silent) return;
    // A missing daemon is one notice per window; a wrong setting is this folder's error.
    if (error instanceof ServerNotFoundError && !error.fromSetting) {
      this.ctx.onMissing();
      return;
    }
    void vscode.window.showErrorMessage(message, 'Open Settings', 'Show Output').then((pick) => {
      if (pick === 'Open Settings') void vscode.commands.executeCommand('workbench.action.openSettings', 'greenloop.server.path');
      if (pick === 'Show Output') this.ctx.output.show();
    });
  }

  private async createClient(server: ServerCommand): Promise<LanguageClient> {
    const apiKey = await this.ctx.apiKeys.get();
    const cwd = this.folder?.uri.fsPath;
    const serverOptions: ServerOptions = {
      command: server.command,
      args: server.args,
      options: { env: serverEnvironment(process.env, apiKey), cwd },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: folderDocumentSelector(this.folder),
      workspaceFolder: this.folder,
      outputChannel: this.ctx.output,
      middleware: {
        workspace: {
          configuration: async (params, token, next) => {
            const answers = await next(params, token);
            if (!Array.isArray(answers)) return answers;
            return params.items.map((item, index) =>
              item.section === SECTION ? this.serverConfig(item.scopeUri) : answers[index],
            );
          },
        },
      },
    };
    const client = new GreenloopLanguageClient('greenloop', this.label, serverOptions, clientOptions);
    client.onNotification(LOOP_EVENT, (event: LoopEventParams) => this.loopEmitter.fire(event));
    client.onNotification(TEST_RESULTS, (params: TestResultsParams) => this.resultsEmitter.fire(params));
    client.onDidChangeState((event) => {
      if (event.newState === State.Stopped && this.client === client) this.stateEmitter.fire('stopped');
      if (event.newState === State.Running && this.client === client) this.stateEmitter.fire('running');
    });
    return client;
  }

  private serverConfig(scopeUri: string | undefined): Record<string, unknown> {
    // The server asks without a scope: this client's folder is the scope.
    const scope = scopeUri ? vscode.Uri.parse(scopeUri) : this.folder?.uri;
    return explicitServerConfig(vscode.workspace.getConfiguration(SECTION, scope), this.ctx.serverKeys);
  }

  private async notifyConfigurationChanged(): Promise<void> {
    if (!this.isRunning || !this.client) return;
    // The server pulls `workspace/configuration` when told that something changed.
    await this.client.sendNotification(DidChangeConfigurationNotification.type, { settings: null });
  }
}
