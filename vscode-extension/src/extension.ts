// The extension's entry point: wires one server per folder, the commands, feedback threads and status bar.

import * as vscode from 'vscode';
import { ApiKeyStore } from './apiKey';
import { registerCommands } from './commands';
import { FeedbackThreads } from './feedback';
import { FolderServers, folderKey } from './folderServers';
import { GreenloopServer } from './languageServer';
import { MissingServerNotice, openInstallTerminal } from './missingServerNotice';
import { serverKeys } from './settings';
import { LoopStatusBar } from './statusBar';
import type { TestResultsParams } from './protocol';
import { TestExplorer } from './testExplorer';
import { TrustGuard } from './workspaceTrust';

let servers: FolderServers<GreenloopServer> | undefined;

function declaredSettings(context: vscode.ExtensionContext): string[] {
  const properties = (context.extension.packageJSON as { contributes?: { configuration?: { properties?: object } } })
    .contributes?.configuration?.properties;
  return Object.keys(properties ?? {});
}

function activeFolderKey(): string | undefined {
  const uri = vscode.window.activeTextEditor?.document.uri;
  const folder = uri && vscode.workspace.getWorkspaceFolder(uri);
  return folder ? folderKey(folder) : undefined;
}

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel('Greenloop', { log: true });
  const apiKeys = new ApiKeyStore(context.secrets);
  const trust = new TrustGuard({
    isTrusted: () => vscode.workspace.isTrusted,
    show: (message, ...items) => vscode.window.showWarningMessage(message, ...items),
    manageTrust: () => void vscode.commands.executeCommand('workbench.trust.manage'),
  });
  const notice = new MissingServerNotice({
    globalState: context.globalState,
    show: (message, ...items) => vscode.window.showWarningMessage(message, ...items),
    install: openInstallTerminal,
    log: (text) => output.info(text),
  });
  const status = new LoopStatusBar();
  const keys = serverKeys(declaredSettings(context));
  const ctx = {
    output,
    apiKeys,
    serverKeys: keys,
    onMissing: () => void notice.report(),
    isTrusted: () => trust.trusted,
    folderCount: () => vscode.workspace.workspaceFolders?.length ?? 0,
  };
  if (!trust.trusted) trust.allows(); // says once why nothing starts
  // Feedback goes to the folder of the commented file (sent only on a user's action, after activation).
  const feedback = new FeedbackThreads({ sendFeedback: (params) => folderServers.sendFeedback(params, vscode.Uri.parse) });
  // The Testing view's controller needs the servers, and each server's results go to it: bound once both exist.
  let showResults: (server: GreenloopServer, params: TestResultsParams) => void = () => undefined;
  const folderServers = new FolderServers<GreenloopServer>(
    {
      create: (folder) => new GreenloopServer(ctx, folder),
      attach: (server) => {
        const key = folderKey(server.folder);
        return vscode.Disposable.from(
          server.onDidChangeState((state) => status.setServerState(key, server.label, state)),
          server.onTestResults((params) => showResults(server, params)),
          server.onLoopEvent((event) => {
            status.onLoopEvent(key, server.label, event);
            feedback.showProgress(event);
            output.info(`${server.label} [${event.kind}] ${event.text}`);
          }),
          { dispose: () => status.forget(key) },
        );
      },
    },
    vscode.workspace.workspaceFolders,
  );
  servers = folderServers;
  const explorer = new TestExplorer(folderServers, output);
  showResults = (server, params) => void explorer.showResults(server, params);
  status.focus(activeFolderKey());
  context.subscriptions.push(
    output,
    folderServers,
    feedback,
    status,
    vscode.workspace.onDidChangeWorkspaceFolders((event) => void folderServers.change(event)),
    vscode.workspace.onDidGrantWorkspaceTrust(() => void folderServers.startAll()),
    vscode.window.onDidChangeActiveTextEditor(() => status.focus(activeFolderKey())),
    explorer,
    ...registerCommands({ servers: folderServers, trust, apiKeys, feedback, output, explorer }),
  );
}

export async function deactivate(): Promise<void> {
  await Promise.all(servers?.all.map((s) => s.stop()) ?? []);
  servers = undefined;
}
