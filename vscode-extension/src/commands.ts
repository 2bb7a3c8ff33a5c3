// The palette commands: each gathers its arguments, calls the server, and reports the result.

import * as vscode from 'vscode';
import { ResponseError } from 'vscode-languageclient/node';
import type { ApiKeyStore } from './apiKey';
import type { FeedbackThreads } from './feedback';
import { generateProject, type ExecuteCommand } from './generateProject';
import type { GreenloopServer } from './languageServer';
import { ServerCommand, type ImproveArgs } from './protocol';
import { describeCancel, describeLoop, describeTests, fixArgs, type UserMessage } from './results';

export interface CommandDeps {
  server: GreenloopServer;
  apiKeys: ApiKeyStore;
  feedback: FeedbackThreads;
  output: vscode.LogOutputChannel;
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

async function fixFailingTests(deps: CommandDeps, arg: unknown): Promise<void> {
  const result = await deps.server.executeCommand(ServerCommand.fixFailingTests, fixArgs(arg));
  // After an accepted fix the server republishes the diagnostics from its last test run.
  show(describeLoop(result));
}

async function runTests(deps: CommandDeps): Promise<void> {
  show(describeTests(await deps.server.executeCommand(ServerCommand.runTests, {})));
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
  show(describeLoop(await deps.server.executeCommand(ServerCommand.improve, args)));
}

async function cancel(deps: CommandDeps): Promise<void> {
  if (!deps.server.isRunning) {
    show(describeCancel(0));
    return;
  }
  const result = await deps.server.executeCommand(ServerCommand.cancel, {});
  show(describeCancel(result.cancelled));
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
  const execute: ExecuteCommand = (command, arg) => deps.server.executeCommand(command, arg);
  const table: Record<string, (...args: unknown[]) => Promise<void>> = {
    'greenloop.generateProject': () => generateProject(execute),
    'greenloop.fixFailingTests': (arg) => fixFailingTests(deps, arg),
    'greenloop.runTests': () => runTests(deps),
    'greenloop.improveSelection': () => improveSelection(deps),
    'greenloop.cancel': () => cancel(deps),
    'greenloop.showOutput': async () => deps.output.show(),
    'greenloop.restartServer': () => deps.server.restart(),
    'greenloop.setApiKey': () => setApiKey(deps),
    'greenloop.feedback.submit': (reply) => deps.feedback.submit(reply as vscode.CommentReply),
    'greenloop.feedback.deleteThread': async (thread) => deps.feedback.deleteThread(thread as vscode.CommentThread),
  };
  return Object.entries(table).map(([id, run]) => vscode.commands.registerCommand(id, guarded(deps.output, run)));
}
