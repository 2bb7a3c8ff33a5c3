// A small stand-in for the `vscode` module: the classes and functions the units under test touch.
import { vi } from 'vitest';

export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}

export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(startLine: number, startChar: number, endLine: number, endChar: number) {
    this.start = new Position(startLine, startChar);
    this.end = new Position(endLine, endChar);
  }
}

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly fsPath: string,
  ) {}
  static file(p: string): Uri {
    return new Uri('file', p);
  }
  static parse(value: string): Uri {
    return new Uri(value.split(':')[0], value.replace(/^file:\/\//, ''));
  }
  toString(): string {
    return `${this.scheme}://${this.fsPath}`;
  }
}

export class MarkdownString {
  isTrusted = false;
  constructor(
    public value = '',
    public supportThemeIcons = false,
  ) {}
}

type Listener<T> = (value: T) => unknown;

export class EventEmitter<T> {
  private listeners: Listener<T>[] = [];
  event = (listener: Listener<T>) => {
    this.listeners.push(listener);
    return { dispose: () => (this.listeners = this.listeners.filter((l) => l !== listener)) };
  };
  fire(value: T): void {
    this.listeners.forEach((l) => l(value));
  }
  dispose(): void {
    this.listeners = [];
  }
}

export class ThemeColor {
  constructor(readonly id: string) {}
}

export enum CommentMode {
  Editing = 0,
  Preview = 1,
}
export enum CommentThreadState {
  Unresolved = 0,
  Resolved = 1,
}
export enum CommentThreadCollapsibleState {
  Collapsed = 0,
  Expanded = 1,
}
export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}

export const comments = {
  createCommentController: vi.fn((id: string, label: string) => ({ id, label, dispose: vi.fn() })),
};

export const window = {
  showInformationMessage: vi.fn(async () => undefined),
  showWarningMessage: vi.fn(async () => undefined),
  showErrorMessage: vi.fn(async () => undefined),
  showInputBox: vi.fn(async () => undefined),
  showQuickPick: vi.fn(async () => undefined),
  createStatusBarItem: vi.fn(() => ({ show: vi.fn(), dispose: vi.fn() })),
  createTerminal: vi.fn((options: { name: string }) => ({ name: options.name, show: vi.fn(), sendText: vi.fn() })),
};

export const workspace = {
  textDocuments: [] as unknown[],
  workspaceFolders: undefined as unknown,
  /** The folder of `workspaceFolders` that holds `uri` (by path), as VS Code answers it. */
  getWorkspaceFolder(uri: Uri): { uri: Uri } | undefined {
    const folders = (workspace.workspaceFolders ?? []) as { uri: Uri }[];
    return folders.find((f) => uri.fsPath === f.uri.fsPath || uri.fsPath.startsWith(`${f.uri.fsPath}/`));
  },
};

export const extensions = { getExtension: vi.fn(() => undefined) };
export const commands = { executeCommand: vi.fn(async () => undefined), registerCommand: vi.fn() };

export class TestRunRequest {
  constructor(readonly include?: readonly unknown[]) {}
}
