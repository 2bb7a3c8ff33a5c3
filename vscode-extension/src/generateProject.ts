// "Greenloop: Generate Project...": asks for prompt, template and target folder, then opens the result.

import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { ServerCommand, type GenerateArgs, type ServerCommandTypes, type Template } from './protocol';
import { describeGenerate } from './results';

const TEMPLATE_DETAIL: Record<Template, string> = {
  python: 'Python package with pytest tests',
  node: 'Node.js package with node:test tests',
  rust: 'Rust crate with cargo test tests',
};
/** Every template the server takes (the Record above must name each one). */
const TEMPLATES = Object.keys(TEMPLATE_DETAIL) as Template[];

/** A folder name from the first words of a prompt: "A CLI that counts words" -> "cli-counts-words". */
export function slugify(prompt: string): string {
  const stop = new Set(['a', 'an', 'the', 'that', 'which', 'with', 'for', 'and', 'of', 'to', 'in']);
  const words = prompt
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .split(' ')
    .filter((w) => w && !stop.has(w));
  return words.slice(0, 4).join('-') || 'greenloop-project';
}

/** Why `dir` cannot be the output folder, or undefined when it can (absent, or an empty directory). */
export async function targetProblem(dir: string): Promise<string | undefined> {
  if (!dir.trim()) return 'Enter a folder path.';
  if (!path.isAbsolute(dir)) return 'Enter an absolute path.';
  try {
    const stat = await fs.stat(dir);
    if (!stat.isDirectory()) return 'A file with that name exists; choose another folder.';
    const entries = await fs.readdir(dir);
    return entries.length ? 'The folder is not empty; choose a new or empty folder.' : undefined;
  } catch {
    return undefined;
  }
}

function defaultParent(): string {
  const folder = vscode.workspace.workspaceFolders?.[0];
  return folder ? path.dirname(folder.uri.fsPath) : os.homedir();
}

/** Asks the three questions; undefined when the user backs out. */
export async function askGenerateArgs(): Promise<GenerateArgs | undefined> {
  const prompt = await vscode.window.showInputBox({
    title: 'Greenloop: Generate Project (1/3)',
    prompt: 'Describe the project to generate',
    placeHolder: 'A command-line tool that counts words in text files, with tests',
    ignoreFocusOut: true,
    validateInput: (value) => (value.trim() ? undefined : 'Describe the project in a sentence or two.'),
  });
  if (!prompt) return undefined;
  const picked = await vscode.window.showQuickPick(
    TEMPLATES.map((t) => ({ label: t, detail: TEMPLATE_DETAIL[t] })),
    { title: 'Greenloop: Generate Project (2/3)', placeHolder: 'Language template', ignoreFocusOut: true },
  );
  if (!picked) return undefined;
  const proposed = path.join(defaultParent(), slugify(prompt));
  const outDir = await vscode.window.showInputBox({
    title: 'Greenloop: Generate Project (3/3)',
    prompt: 'Target folder (absolute path; new or empty)',
    value: proposed,
    valueSelection: [proposed.length - path.basename(proposed).length, proposed.length],
    ignoreFocusOut: true,
    validateInput: targetProblem,
  });
  if (!outDir) return undefined;
  return { prompt: prompt.trim(), template: picked.label, outDir: path.resolve(outDir.trim()) };
}

export type ExecuteCommand = <C extends keyof ServerCommandTypes>(
  command: C,
  arg: ServerCommandTypes[C]['args'],
) => Promise<ServerCommandTypes[C]['result']>;

/** The whole command: ask, generate (the server shows progress), report, open. */
export async function generateProject(execute: ExecuteCommand): Promise<void> {
  const args = await askGenerateArgs();
  if (!args) return;
  const result = await execute(ServerCommand.generateProject, args);
  const message = describeGenerate(result);
  const folder = vscode.Uri.file(result.outDir || args.outDir);
  if (!vscode.workspace.workspaceFolders?.length) {
    void vscode.window.showInformationMessage(message.text);
    await vscode.commands.executeCommand('vscode.openFolder', folder);
    return;
  }
  const show = message.level === 'error' ? vscode.window.showErrorMessage : vscode.window.showInformationMessage;
  const pick = await show(message.text, 'Open Folder', 'Open in New Window', 'Add to Workspace');
  if (pick === 'Open Folder') await vscode.commands.executeCommand('vscode.openFolder', folder);
  if (pick === 'Open in New Window') {
    await vscode.commands.executeCommand('vscode.openFolder', folder, { forceNewWindow: true });
  }
  if (pick === 'Add to Workspace') {
    const count = vscode.workspace.workspaceFolders.length;
    vscode.workspace.updateWorkspaceFolders(count, 0, { uri: folder });
  }
}
