import { describe, expect, it } from 'vitest';
import * as vscode from 'vscode';
import { FeedbackThreads, feedbackRange, replyText, type FeedbackSender } from '../../src/feedback';
import type { FeedbackParams, FeedbackResult, LoopEventParams } from '../../src/protocol';

function thread(range = new vscode.Range(4, 2, 4, 2)) {
  return {
    uri: vscode.Uri.file('/ws/calc.py'),
    range,
    comments: [] as vscode.Comment[],
    canReply: true,
    state: vscode.CommentThreadState.Unresolved,
    label: undefined as string | undefined,
    collapsibleState: vscode.CommentThreadCollapsibleState.Collapsed,
    dispose: () => undefined,
  };
}

function bodies(t: ReturnType<typeof thread>): string[] {
  return t.comments.map((c) => (c.body as vscode.MarkdownString).value);
}

class Sender implements FeedbackSender {
  sent: FeedbackParams[] = [];
  resolve!: (r: FeedbackResult) => void;
  reject!: (e: Error) => void;
  sendFeedback(params: FeedbackParams): Promise<FeedbackResult> {
    this.sent.push(params);
    return new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }
}

const progress = (text: string): LoopEventParams => ({
  runId: 'r', kind: 'tests_ran', text, iteration: 1, maxIterations: 5, passed: 0, failed: 1,
  promptTokens: null, completionTokens: null, cost: null, outcome: null, event: {},
});

describe('FeedbackThreads', () => {
  it('sends the thread text and whole-line range, shows progress, then the reply; applied resolves', async () => {
    const sender = new Sender();
    const threads = new FeedbackThreads(sender);
    const t = thread();
    const done = threads.submit({ thread: t as unknown as vscode.CommentThread, text: ' ignore blank lines ' });
    expect(sender.sent[0]).toMatchObject({
      uri: 'file:///ws/calc.py',
      text: 'ignore blank lines',
      range: { start: { line: 4, character: 0 }, end: { line: 4, character: 0 } },
    });
    expect(t.canReply).toBe(false);
    threads.showProgress(progress('iteration 1/5: 1 failed'));
    expect(bodies(t)).toEqual(['ignore blank lines', '$(sync~spin) iteration 1/5: 1 failed']);

    sender.resolve({ threadId: sender.sent[0].threadId, status: 'applied', message: 'Skips blank lines now.', edit: null });
    await done;
    expect(bodies(t)[1]).toBe('**$(check) Change applied**\n\nSkips blank lines now.');
    expect(t.state).toBe(vscode.CommentThreadState.Resolved);
    expect(t.canReply).toBe(true);
  });

  it('keeps one thread id across replies, and an unresolved thread when the change is declined', async () => {
    const sender = new Sender();
    const threads = new FeedbackThreads(sender);
    const t = thread();
    const first = threads.submit({ thread: t as unknown as vscode.CommentThread, text: 'one' });
    sender.resolve({ threadId: '', status: 'declined', message: '', edit: null });
    await first;
    const second = threads.submit({ thread: t as unknown as vscode.CommentThread, text: 'two' });
    sender.resolve({ threadId: '', status: 'no_change', message: 'Already does that.', edit: null });
    await second;
    expect(sender.sent[0].threadId).toBe(sender.sent[1].threadId);
    expect(t.state).toBe(vscode.CommentThreadState.Unresolved);
    expect(bodies(t)).toEqual(['one', '**$(circle-slash) Change declined**', 'two', '**$(info) No change needed**\n\nAlready does that.']);
  });

  it('shows a failed request in the thread and lets the user reply again', async () => {
    const sender = new Sender();
    const threads = new FeedbackThreads(sender);
    const t = thread();
    const done = threads.submit({ thread: t as unknown as vscode.CommentThread, text: 'x' });
    sender.reject(new Error('greenloop is already running a loop; cancel it first or wait'));
    await done;
    expect(bodies(t)[1]).toContain('already running a loop');
    expect(t.canReply).toBe(true);
  });

  it('ignores an empty comment', async () => {
    const sender = new Sender();
    await new FeedbackThreads(sender).submit({ thread: thread() as unknown as vscode.CommentThread, text: '  ' });
    expect(sender.sent).toEqual([]);
  });
});

describe('helpers', () => {
  it('replyText puts the status first', () => {
    expect(replyText({ threadId: 't', status: 'failed', message: 'tests still fail', edit: null })).toBe(
      '**$(error) Could not do it**\n\ntests still fail',
    );
  });

  it('feedbackRange covers whole lines', () => {
    const doc = { lineCount: 10, lineAt: (n: number) => ({ range: new vscode.Range(n, 0, n, 12) }) };
    const range = feedbackRange(new vscode.Range(2, 5, 3, 1), doc as unknown as vscode.TextDocument);
    expect([range.start.line, range.start.character, range.end.line, range.end.character]).toEqual([2, 0, 3, 12]);
  });
});
