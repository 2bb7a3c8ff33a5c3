// The status bar item: server state and the running loop's iteration, tests, tokens and cost.

import * as vscode from 'vscode';
import { INITIAL_STATE, formatLoopStatus, reduceLoopState, type LoopState, type ServerState } from './loopStatus';
import type { LoopEventParams } from './protocol';

export class LoopStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('greenloop.status', vscode.StatusBarAlignment.Left, 50);
  private state: LoopState = INITIAL_STATE;

  constructor() {
    this.item.name = 'Greenloop';
    this.item.command = 'greenloop.showOutput';
    this.render();
    this.item.show();
  }

  setServerState(server: ServerState): void {
    this.state = { ...this.state, server };
    this.render();
  }

  onLoopEvent(event: LoopEventParams): void {
    this.state = reduceLoopState(this.state, event);
    this.render();
  }

  dispose(): void {
    this.item.dispose();
  }

  private render(): void {
    const { text, tooltip } = formatLoopStatus(this.state);
    this.item.text = text;
    this.item.tooltip = tooltip;
    const failing = this.state.server === 'notFound' || this.state.server === 'failed';
    this.item.backgroundColor = failing ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
  }
}
