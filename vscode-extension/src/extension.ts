// The extension's entry point: wires the server, commands, feedback threads and status bar.

import * as vscode from 'vscode';
import { ApiKeyStore } from './apiKey';
import { registerCommands } from './commands';
import { FeedbackThreads } from './feedback';
import { GreenloopServer } from './languageServer';
import { serverKeys } from './settings';
import { LoopStatusBar } from './statusBar';

let server: GreenloopServer | undefined;

function declaredSettings(context: vscode.ExtensionContext): string[] {
  const properties = (context.extension.packageJSON as { contributes?: { configuration?: { properties?: object } } })
    .contributes?.configuration?.properties;
  return Object.keys(properties ?? {});
}

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel('Greenloop', { log: true });
  const apiKeys = new ApiKeyStore(context.secrets);
  server = new GreenloopServer({ output, apiKeys, serverKeys: serverKeys(declaredSettings(context)) });
  const feedback = new FeedbackThreads(server);
  const status = new LoopStatusBar();
  context.subscriptions.push(
    output,
    server,
    feedback,
    status,
    server.onDidChangeState((state) => status.setServerState(state)),
    server.onLoopEvent((event) => {
      status.onLoopEvent(event);
      feedback.showProgress(event);
      output.info(`[${event.kind}] ${event.text}`);
    }),
    ...registerCommands({ server, apiKeys, feedback, output }),
  );
  void server.start();
}

export async function deactivate(): Promise<void> {
  await server?.stop();
  server = undefined;
}
