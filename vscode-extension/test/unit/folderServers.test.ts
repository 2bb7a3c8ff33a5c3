import { describe, expect, it } from 'vitest';
import * as vscode from 'vscode';
import { FolderServers, folderDocumentSelector, folderKey, type FolderServer } from '../../src/folderServers';
import type { FeedbackParams, FeedbackResult } from '../../src/protocol';

const folder = (path: string, index = 0) =>
  ({ uri: vscode.Uri.file(path), name: path.split('/').pop(), index }) as unknown as vscode.WorkspaceFolder;

class FakeServer implements FolderServer {
  events: string[] = [];
  isRunning = false;
  feedback: FeedbackParams[] = [];
  constructor(readonly folder: vscode.WorkspaceFolder | undefined) {}
  async start() {
    this.events.push('start');
    this.isRunning = true;
  }
  async stop() {
    this.events.push('stop');
    this.isRunning = false;
  }
  async restart() {
    this.events.push('restart');
  }
  async sendFeedback(params: FeedbackParams): Promise<FeedbackResult> {
    this.feedback.push(params);
    return { status: 'applied', message: '', runId: null } as unknown as FeedbackResult;
  }
  dispose() {
    this.events.push('dispose');
  }
}

function make(folders: vscode.WorkspaceFolder[] | undefined) {
  const created: FakeServer[] = [];
  const detached: string[] = [];
  const servers = new FolderServers<FakeServer>(
    {
      create: (f) => {
        const s = new FakeServer(f);
        created.push(s);
        return s;
      },
      attach: (s) => ({ dispose: () => detached.push(folderKey(s.folder)) }),
    },
    folders,
  );
  return { servers, created, detached };
}

describe('FolderServers (multi-root: one client per folder)', () => {
  it('starts one server per workspace folder, each with its folder', () => {
    const a = folder('/ws/a', 0);
    const b = folder('/ws/b', 1);
    const { servers, created } = make([a, b]);
    expect(created.map((s) => s.folder)).toEqual([a, b]);
    expect(created.every((s) => s.events.join() === 'start')).toBe(true);
    expect(servers.all).toHaveLength(2);
  });

  it('routes a file to its folder\'s server, the innermost folder when they nest', () => {
    const { servers, created } = make([folder('/ws/a'), folder('/ws/ab'), folder('/ws/a/inner')]);
    expect(servers.forUri(vscode.Uri.file('/ws/a/x.py'))).toBe(created[0]);
    expect(servers.forUri(vscode.Uri.file('/ws/ab/x.py'))).toBe(created[1]);
    expect(servers.forUri(vscode.Uri.file('/ws/a/inner/tests/t.py'))).toBe(created[2]);
    expect(servers.forUri(vscode.Uri.file('/elsewhere/x.py'))).toBeUndefined();
  });

  it('starts the servers of folders added at runtime and stops those of removed ones', async () => {
    const a = folder('/ws/a', 0);
    const b = folder('/ws/b', 1);
    const { servers, created, detached } = make([a]);
    await servers.change({ added: [b], removed: [a] });
    expect(created).toHaveLength(2);
    expect(created[0].events).toEqual(['start', 'stop', 'dispose']);
    expect(created[1].events).toEqual(['start']);
    expect(detached).toEqual([folderKey(a)]);
    expect(servers.all.map((s) => s.folder)).toEqual([b]);
  });

  it('a window without folders gets one folderless server (Generate Project), replaced when a folder comes', async () => {
    const { servers, created } = make(undefined);
    expect(created[0].folder).toBeUndefined();
    expect(servers.forUri(vscode.Uri.file('/any/x.py'))).toBe(created[0]);
    const a = folder('/ws/a');
    await servers.change({ added: [a], removed: [] });
    expect(created[0].events).toEqual(['start', 'stop', 'dispose']);
    expect(servers.all.map((s) => s.folder)).toEqual([a]);
    await servers.change({ added: [], removed: [a] });
    expect(servers.all.map((s) => s.folder)).toEqual([undefined]);
  });

  it('sends feedback to the server of the commented file\'s folder', async () => {
    const { servers, created } = make([folder('/ws/a', 0), folder('/ws/b', 1)]);
    const uri = vscode.Uri.file('/ws/b/words.py').toString();
    const params = { uri, text: 'x', threadId: 't', range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } } };
    await servers.sendFeedback(params, vscode.Uri.parse);
    expect(created[1].feedback).toEqual([params]);
    expect(created[0].feedback).toEqual([]);
    await expect(servers.sendFeedback({ ...params, uri: 'file:///nowhere/x.py' }, vscode.Uri.parse)).rejects.toThrow(/not in a workspace folder/);
  });

  it('scopes each client\'s documents to its folder', () => {
    expect(folderDocumentSelector(folder('/ws/a'))).toEqual([{ scheme: 'file', pattern: '/ws/a/**/*' }]);
    expect(folderDocumentSelector(undefined)).toEqual([{ scheme: 'file' }]);
  });
});
