// The palette commands: each gathers its arguments, calls the server, and reports the result.

import * as vscode from 'vscode';
import { ResponseError } from 'vscode-languageclient/node';
import type { ApiKeyStore } from './apiKey';
import type { FeedbackThreads } from './feedback';
import { generateProject, type ExecuteCommand } from './generateProject';
import type { FolderServers } from './folderServers';
import type { GreenloopServer } from './languageServer';
import { openInstallTerminal } from './missingServerNotice';
import { ServerCommand, type ImproveArgs } from './protocol';
import { describeCancel, describeLoop, describeTests, fixArgs, type UserMessage } from './results';
import { fixWithGreenloop } from './fixTest';
import type { TestExplorer } from './testExplorer';
import type { TrustGuard } from './workspaceTrust';

export interface CommandDeps {
  servers: FolderServers<GreenloopServer>;
  trust: TrustGuard;
  apiKeys: ApiKeyStore;
  feedback: FeedbackThreads;
  output: vscode.LogOutputChannel;
  explorer: TestExplorer;
}

function show(message: UserMessage): void {
  const fn = {
    info: vscode.window.showInformationMessage,
    warning: vscode.window.showWarningMessage,
    error: vscode.window.showErrorMessage,
  }[message.level];
  void fn(message.text);
}

/** Errors become one readable message; the details go to the output channel. */
function guarded<A extends unknown[]>(output: vscode.LogOutputChannel, run: (...args: A) => Promise<void>) {
  return async (...args: A): Promise<void> => {
    try {
      await run(...args);
    } catch (error) {
      const text = error instanceof ResponseError || error instanceof Error ? error.message : String(error);
      output.error(text);
      const shown = /^greenloop\b/i.test(text) ? text : `Greenloop: ${text}`;
      const pick = await vscode.window.showErrorMessage(shown, 'Show Output');
      if (pick) output.show();
    }
  };
}

/**
 * The server a command runs on: the active editor's folder, else the only folder, else the one
 * the user picks (undefined: they backed out).
 */
async function serverForCommand(deps: CommandDeps): Promise<GreenloopServer | undefined> {
  const document = vscode.window.activeTextEditor?.document;
  const fromEditor = document?.uri.scheme === 'file' ? deps.servers.forUri(document.uri) : undefined;
  if (fromEditor) return fromEditor;
  const all = deps.servers.all;
  if (all.length <= 1) return all[0];
  const folder = await vscode.window.showWorkspaceFolderPick({ placeHolder: 'Greenloop: which folder?' });
  return folder ? deps.servers.forUri(folder.uri) : undefined;
}

async function fixFailingTests(deps: CommandDeps, arg: unknown): Promise<void> {
  const server = await serverForCommand(deps);
  if (!server) return;
  const result = await server.executeCommand(ServerCommand.fixFailingTests, fixArgs(arg));
  // After an accepted fix the server republishes the diagnostics from its last test run.
  show(describeLoop(result));
}

async function runTests(deps: CommandDeps): Promise<void> {
  const server = await serverForCommand(deps);
  if (!server) return;
  show(describeTests(await server.executeCommand(ServerCommand.runTests, {})));
}

async function improveSelection(deps: CommandDeps): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void vscode.window.showWarningMessage('Greenloop: open a file and select the code to improve first.');
    return;
  }
  const selection = editor.selection.isEmpty ? editor.document.lineAt(editor.selection.active.line).range : editor.selection;
  const instruction = await vscode.window.showInputBox({
    title: 'Greenloop: Improve Selection',
    prompt: 'What should change in the selected code?',
    placeHolder: 'e.g. handle empty input',
    ignoreFocusOut: true,
  });
  if (!instruction?.trim()) return;
  const range = {
    start: { line: selection.start.line, character: selection.start.character },
    end: { line: selection.end.line, character: selection.end.character },
  };
  const args: ImproveArgs = { uri: editor.document.uri.toString(), range, instruction: instruction.trim() };
  const server = deps.servers.forUri(editor.document.uri);
  if (!server) throw new Error('Greenloop: the file is not in a workspace folder.');
  show(describeLoop(await server.executeCommand(ServerCommand.improve, args)));
}

/** Cancels the runs of every folder. */
async function cancel(deps: CommandDeps): Promise<void> {
  const running = deps.servers.all.filter((s) => s.isRunning);
  const results = await Promise.all(running.map((s) => s.executeCommand(ServerCommand.cancel, {})));
  show(describeCancel(results.reduce((sum, r) => sum + r.cancelled, 0)));
}

async function setApiKey(deps: CommandDeps): Promise<void> {
  const value = await vscode.window.showInputBox({
    title: 'Greenloop: Set API Key',
    prompt: 'API key of the OpenAI-compatible endpoint (kept in VS Code\'s secret storage; empty removes it)',
    password: true,
    ignoreFocusOut: true,
  });
  if (value === undefined) return;
  await deps.apiKeys.set(value);
  const text = value.trim() ? 'API key stored; the server restarts with it.' : 'API key removed; the server restarts.';
  void vscode.window.showInformationMessage(`Greenloop: ${text}`);
}

export function registerCommands(deps: CommandDeps): vscode.Disposable[] {
  // Generation makes a new folder: any server will do, the active folder's by preference.
  const execute: ExecuteCommand = async (command, arg) => {
    const server = (await serverForCommand(deps)) ?? deps.servers.all[0];
    return server.executeCommand(command, arg);
  };
  // Commands that start the server or a run need a trusted workspace; the rest work anywhere.
  const trusted = <A extends unknown[]>(run: (...args: A) => Promise<void>) => deps.trust.guard(run);
  const table: Record<string, (...args: unknown[]) => Promise<void>> = {
    'greenloop.generateProject': trusted(() => generateProject(execute)),
    'greenloop.fixFailingTests': trusted((arg) => fixFailingTests(deps, arg)),
    'greenloop.runTests': trusted(() => runTests(deps)),
    'greenloop.fixTest': trusted((arg) => fixWithGreenloop(arg, { explorer: deps.explorer, servers: deps.servers, show })),
    'greenloop.improveSelection': trusted(() => improveSelection(deps)),
    'greenloop.cancel': () => cancel(deps),
    'greenloop.showOutput': async () => deps.output.show(),
    'greenloop.restartServer': trusted(() => deps.servers.restartAll()),
    'greenloop.installServer': async () => openInstallTerminal(),
    'greenloop.setApiKey': () => setApiKey(deps),
    'greenloop.feedback.submit': trusted((reply) => deps.feedback.submit(reply as vscode.CommentReply)),
    'greenloop.feedback.deleteThread': async (thread) => deps.feedback.deleteThread(thread as vscode.CommentThread),
  };
  return Object.entries(table).map(([id, run]) => vscode.commands.registerCommand(id, guarded(deps.output, run)));
}
