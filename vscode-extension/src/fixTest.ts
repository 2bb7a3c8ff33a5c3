// "Fix with Greenloop" on a test item (ours or another controller's): the fix loop on that test, its progress
// in the Test Results output, the change in the Refactor Preview.

import * as vscode from 'vscode';
import { folderKey, type FolderServers } from './folderServers';
import type { GreenloopServer } from './languageServer';
import { ServerCommand, type LoopEventParams } from './protocol';
import { describeLoop, type UserMessage } from './results';
import type { TestExplorer } from './testExplorer';
import { daemonTestId, NOT_RUNNABLE, type TestItemLike } from './testIds';

export interface FixTarget {
  server: GreenloopServer;
  testIds: string[];
  label: string;
  own?: vscode.TestItem;
}

/** The test item of a menu's argument: the item (item menus) or `{test, message}` (the peek view's message menu). */
export function itemOfArgument(arg: unknown): (TestItemLike & { uri?: vscode.Uri }) | undefined {
  if (typeof arg !== 'object' || arg === null) return undefined;
  const candidate = 'test' in arg && typeof (arg as { test: unknown }).test === 'object' ? (arg as { test: unknown }).test : arg;
  if (typeof candidate !== 'object' || candidate === null) return undefined;
  const item = candidate as Partial<TestItemLike>;
  return typeof item.id === 'string' ? (candidate as TestItemLike & { uri?: vscode.Uri }) : undefined;
}

/** The server and daemon ids a menu's item maps to, or the message saying why it cannot be fixed. */
export function fixTarget(arg: unknown, explorer: TestExplorer, servers: FolderServers<GreenloopServer>): FixTarget | string {
  const item = itemOfArgument(arg);
  if (!item) return `Greenloop: ${NOT_RUNNABLE}: pick a failed test in the Testing view.`;
  const own = explorer.lookup(item);
  if (own) {
    const server = servers.all.find((s) => folderKey(s.folder) === own.folder);
    const ownItem = item as unknown as vscode.TestItem;
    const testIds = explorer.leafIds(ownItem);
    if (!server || !testIds.length) return `Greenloop: ${NOT_RUNNABLE}: "${item.label}" has no tests under it.`;
    if (!own.testId && ownItem.id === own.folder) return { server, testIds: [], label: item.label, own: ownItem }; // a folder: all failing
    return { server, testIds, label: item.label, own: ownItem };
  }
  const server = item.uri ? servers.forUri(item.uri) : undefined;
  const mapped = daemonTestId(item, server?.folder?.uri.fsPath);
  if (!server || !mapped.ok) return `Greenloop: ${mapped.ok ? `${NOT_RUNNABLE}: "${item.label}" is not in a workspace folder` : mapped.reason}.`;
  return { server, testIds: [mapped.testId], label: item.label };
}

/** One line of the loop's progress for the Test Results output. */
export function progressLine(event: LoopEventParams): string {
  return `[${event.kind}] ${event.text}`.replace(/\r?\n/g, '\r\n') + '\r\n';
}

export async function fixWithGreenloop(
  arg: unknown,
  deps: { explorer: TestExplorer; servers: FolderServers<GreenloopServer>; show: (m: UserMessage) => void },
): Promise<void> {
  const target = fixTarget(arg, deps.explorer, deps.servers);
  if (typeof target === 'string') {
    void vscode.window.showErrorMessage(target);
    return;
  }
  const controller = deps.explorer.controller;
  const request = new vscode.TestRunRequest(target.own ? [target.own] : undefined);
  const run = controller.createTestRun(request, `Greenloop: fix ${target.label}`, true);
  run.appendOutput(`Greenloop: fixing ${target.testIds.join(', ') || 'the failing tests'}\r\n`);
  const progress = target.server.onLoopEvent((event) => run.appendOutput(progressLine(event)));
  try {
    const args = target.testIds.length ? { testIds: target.testIds } : {};
    const result = await target.server.executeCommand(ServerCommand.fixFailingTests, args);
    const message = describeLoop(result);
    run.appendOutput(`${message.text}\r\n`);
    deps.show(message);
  } finally {
    progress.dispose();
    run.end();
  }
}
