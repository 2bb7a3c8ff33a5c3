// The status bar item: the current folder's server state and its running loop (iteration, tests, tokens, cost).

import * as vscode from 'vscode';
import { INITIAL_STATE, formatLoopStatus, reduceLoopState, type LoopState, type ServerState } from './loopStatus';
import type { LoopEventParams } from './protocol';

/** One state per folder (keyed by folderKey); the item shows the current folder's. */
export class LoopStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('greenloop.status', vscode.StatusBarAlignment.Left, 50);
  private readonly states = new Map<string, { label: string; state: LoopState }>();
  private current: string | undefined;

  constructor() {
    this.item.name = 'Greenloop';
    this.item.command = 'greenloop.showOutput';
    this.render();
    this.item.show();
  }

  setServerState(key: string, label: string, server: ServerState): void {
    this.update(key, label, (state) => ({ ...state, server }));
  }

  onLoopEvent(key: string, label: string, event: LoopEventParams): void {
    this.update(key, label, (state) => reduceLoopState(state, event));
    this.current = key; // a running loop is what the user wants to see
    this.render();
  }

  /** The folder of the active editor (undefined: keep showing the last one). */
  focus(key: string | undefined): void {
    if (key === undefined || !this.states.has(key)) return;
    this.current = key;
    this.render();
  }

  forget(key: string): void {
    this.states.delete(key);
    if (this.current === key) this.current = undefined;
    this.render();
  }

  dispose(): void {
    this.item.dispose();
  }

  private update(key: string, label: string, next: (state: LoopState) => LoopState): void {
    const state = next(this.states.get(key)?.state ?? INITIAL_STATE);
    this.states.set(key, { label, state });
    this.current ??= key;
    this.render();
  }

  private render(): void {
    const shown = (this.current !== undefined && this.states.get(this.current)) || this.states.values().next().value;
    const state = shown?.state ?? INITIAL_STATE;
    const { text, tooltip } = formatLoopStatus(state);
    this.item.text = text;
    this.item.tooltip = shown && shown.label !== 'Greenloop' ? `${shown.label}\n${tooltip}` : tooltip;
    const failing = state.server === 'notFound' || state.server === 'failed';
    this.item.backgroundColor = failing ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
  }
}
