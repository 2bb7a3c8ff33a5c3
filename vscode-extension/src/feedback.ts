// Inline feedback: a comment thread's text goes to `greenloop/feedback`; the reply lands in the thread.

import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import type { FeedbackParams, FeedbackResult, FeedbackStatus, LoopEventParams } from './protocol';

export const CONTROLLER_ID = 'greenloop-feedback';

export interface FeedbackSender {
  sendFeedback(params: FeedbackParams): Promise<FeedbackResult>;
}

class NoteComment implements vscode.Comment {
  mode = vscode.CommentMode.Preview;
  constructor(
    public body: vscode.MarkdownString,
    public author: vscode.CommentAuthorInformation,
    public contextValue?: string,
    public label?: string,
  ) {}
}

const STATUS_TEXT: Record<FeedbackStatus, string> = {
  applied: '$(check) Change applied',
  declined: '$(circle-slash) Change declined',
  no_change: '$(info) No change needed',
  failed: '$(error) Could not do it',
  cancelled: '$(circle-slash) Cancelled',
};

function markdown(text: string): vscode.MarkdownString {
  const md = new vscode.MarkdownString(text, true);
  md.isTrusted = false;
  return md;
}

/** The reply shown in the thread for a server answer. */
export function replyText(result: FeedbackResult): string {
  const status = STATUS_TEXT[result.status] ?? result.status;
  const message = result.message.trim();
  return message ? `**${status}**\n\n${message}` : `**${status}**`;
}

/** Whole lines of the thread's range: the code the feedback is about. */
export function feedbackRange(range: vscode.Range | undefined, document: vscode.TextDocument | undefined): vscode.Range {
  const start = range?.start.line ?? 0;
  const end = range?.end.line ?? start;
  const endChar = document && end < document.lineCount ? document.lineAt(end).range.end.character : 0;
  return new vscode.Range(start, 0, end, endChar);
}

export class FeedbackThreads implements vscode.Disposable {
  private readonly controller: vscode.CommentController;
  private readonly ids = new WeakMap<vscode.CommentThread, string>();
  private pending: { thread: vscode.CommentThread; comment: NoteComment } | undefined;

  constructor(private readonly sender: FeedbackSender) {
    this.controller = vscode.comments.createCommentController(CONTROLLER_ID, 'Greenloop feedback');
    this.controller.options = {
      prompt: 'Tell greenloop what to change here…',
      placeHolder: 'e.g. this should ignore blank lines',
    };
    this.controller.commentingRangeProvider = {
      provideCommentingRanges: (document) =>
        document.uri.scheme === 'file' ? [new vscode.Range(0, 0, Math.max(document.lineCount - 1, 0), 0)] : [],
    };
  }

  /** Handler of the thread's "Ask Greenloop" button (new thread or reply). */
  async submit(reply: vscode.CommentReply): Promise<void> {
    const text = reply.text.trim();
    const thread = reply.thread;
    if (!text) return;
    if (this.pending) {
      void vscode.window.showWarningMessage('Greenloop is already working on a feedback comment; wait or cancel it.');
      return;
    }
    const threadId = this.ids.get(thread) ?? randomUUID();
    this.ids.set(thread, threadId);
    const working = new NoteComment(markdown('$(sync~spin) Working on it…'), { name: 'Greenloop' }, 'pending');
    thread.comments = [...thread.comments, new NoteComment(markdown(text), { name: 'You' }), working];
    thread.canReply = false;
    thread.collapsibleState = vscode.CommentThreadCollapsibleState.Expanded;
    this.pending = { thread, comment: working };
    try {
      const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === thread.uri.toString());
      const range = feedbackRange(thread.range, document);
      const result = await this.sender.sendFeedback({
        uri: thread.uri.toString(),
        range: { start: { line: range.start.line, character: 0 }, end: { line: range.end.line, character: range.end.character } },
        text,
        threadId,
      });
      this.finish(thread, working, replyText(result), result.status === 'applied');
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.finish(thread, working, `**$(error) Greenloop failed**\n\n${message}`, false);
    } finally {
      this.pending = undefined;
      thread.canReply = true;
    }
  }

  /** Progress from the loop that answers the pending comment. */
  showProgress(event: LoopEventParams): void {
    if (!this.pending || !event.text || event.kind === 'done') return;
    const { thread, comment } = this.pending;
    comment.body = markdown(`$(sync~spin) ${event.text}`);
    thread.comments = [...thread.comments];
  }

  deleteThread(thread: vscode.CommentThread): void {
    if (this.pending?.thread === thread) return;
    thread.dispose();
  }

  dispose(): void {
    this.controller.dispose();
  }

  private finish(thread: vscode.CommentThread, working: NoteComment, text: string, resolved: boolean): void {
    working.body = markdown(text);
    working.contextValue = 'reply';
    thread.comments = [...thread.comments];
    if (resolved) {
      thread.state = vscode.CommentThreadState.Resolved;
      thread.label = 'Resolved by greenloop';
    }
  }
}
