// Starts, stops and talks to `greenloop serve` through vscode-languageclient.

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
  LOOP_EVENT,
  type FeedbackParams,
  type FeedbackResult,
  type LoopEventParams,
  type ServerCommandTypes,
} from './protocol';
import { locateServer, probeCommand, isExecutableFile, ServerNotFoundError, type ServerCommand } from './serverLocator';
import { activePythonInterpreter } from './pythonEnvironment';
import { SECTION, explicitServerConfig, serverPathSetting } from './settings';

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
}

export class GreenloopServer implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private pending: Promise<void> | undefined;
  private startError: string | undefined;
  private readonly stateEmitter = new vscode.EventEmitter<ServerState>();
  private readonly loopEmitter = new vscode.EventEmitter<LoopEventParams>();
  private readonly disposables: vscode.Disposable[] = [this.stateEmitter, this.loopEmitter];
  readonly onDidChangeState = this.stateEmitter.event;
  readonly onLoopEvent = this.loopEmitter.event;

  constructor(private readonly ctx: ServerContext) {
    this.disposables.push(
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration(`${SECTION}.server`)) void this.restart();
        else if (event.affectsConfiguration(SECTION)) void this.notifyConfigurationChanged();
      }),
      ctx.apiKeys.onDidChange(() => void this.restart()),
    );
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
    this.stateEmitter.fire('starting');
    this.startError = undefined;
    let server: ServerCommand;
    try {
      server = await this.locate();
    } catch (error) {
      this.reportNotFound(error, silent);
      return;
    }
    this.ctx.output.info(`starting ${server.command} ${server.args.join(' ')} (found via ${server.source})`);
    const client = await this.createClient(server);
    this.client = client;
    try {
      await client.start();
      this.stateEmitter.fire('running');
    } catch (error) {
      this.ctx.output.error(`the greenloop server did not start: ${String(error)}`);
      this.stateEmitter.fire('failed');
      void vscode.window
        .showErrorMessage(`Greenloop: the language server did not start (${String(error)}).`, 'Show Output')
        .then((pick) => pick && this.ctx.output.show());
    }
  }

  private locate(): Promise<ServerCommand> {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
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
    this.ctx.output.error(message);
    this.stateEmitter.fire('notFound');
    if (silent) return;
    void vscode.window.showErrorMessage(message, 'Open Settings', 'Show Output').then((pick) => {
      if (pick === 'Open Settings') void vscode.commands.executeCommand('workbench.action.openSettings', 'greenloop.server.path');
      if (pick === 'Show Output') this.ctx.output.show();
    });
  }

  private async createClient(server: ServerCommand): Promise<LanguageClient> {
    const apiKey = await this.ctx.apiKeys.get();
    const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const serverOptions: ServerOptions = {
      command: server.command,
      args: server.args,
      options: { env: serverEnvironment(process.env, apiKey), cwd },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: 'file' }],
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
    const client = new GreenloopLanguageClient('greenloop', 'Greenloop', serverOptions, clientOptions);
    client.onNotification(LOOP_EVENT, (event: LoopEventParams) => this.loopEmitter.fire(event));
    client.onDidChangeState((event) => {
      if (event.newState === State.Stopped && this.client === client) this.stateEmitter.fire('stopped');
      if (event.newState === State.Running && this.client === client) this.stateEmitter.fire('running');
    });
    return client;
  }

  private serverConfig(scopeUri: string | undefined): Record<string, unknown> {
    const scope = scopeUri ? vscode.Uri.parse(scopeUri) : vscode.workspace.workspaceFolders?.[0]?.uri;
    return explicitServerConfig(vscode.workspace.getConfiguration(SECTION, scope), this.ctx.serverKeys);
  }

  private async notifyConfigurationChanged(): Promise<void> {
    if (!this.isRunning || !this.client) return;
    // The server pulls `workspace/configuration` when told that something changed.
    await this.client.sendNotification(DidChangeConfigurationNotification.type, { settings: null });
  }
}
