import { describe, expect, it, vi } from 'vitest';
import * as vscode from 'vscode';
import { EventEmitter } from 'vscode';
import { fixWithGreenloop } from '../../src/fixTest';
import type { FolderServers } from '../../src/folderServers';
import type { GreenloopServer } from '../../src/languageServer';
import type { LoopEventParams, LoopResult } from '../../src/protocol';
import type { TestExplorer } from '../../src/testExplorer';

function event(kind: string, text: string): LoopEventParams {
  return { runId: 'r1', kind, text, iteration: 1, maxIterations: 3, passed: null, failed: null, promptTokens: null, completionTokens: null, cost: null, outcome: null, event: {} };
}

function setUp(own: boolean) {
  const loop = new EventEmitter<LoopEventParams>();
  const folder = { uri: vscode.Uri.file('/w/proj'), name: 'proj', index: 0 };
  const executeCommand = vi.fn(async (): Promise<LoopResult> => {
    loop.fire(event('candidate_asked', 'candidate 1/4 for add'));
    loop.fire(event('candidate_tested', 'candidate 1: 2 of 2 pass (best so far)'));
    return { runId: 'r1', outcome: 'green', summary: 'all tests pass', applied: true };
  });
  const server = { folder, onLoopEvent: loop.event, executeCommand } as unknown as GreenloopServer;
  const output: string[] = [];
  const run = { appendOutput: vi.fn((text: string) => output.push(text)), end: vi.fn() };
  const createTestRun = vi.fn(() => run);
  const item = { id: `${folder.uri.toString()}|tests/t.py::test_add`, label: 'test_add', uri: vscode.Uri.file('/w/proj/tests/t.py') };
  const explorer = {
    controller: { createTestRun },
    lookup: () => (own ? { folder: folder.uri.toString(), testId: 'tests/t.py::test_add' } : undefined),
    leafIds: () => ['tests/t.py::test_add'],
  } as unknown as TestExplorer;
  const servers = { all: [server], forUri: () => server } as unknown as FolderServers<GreenloopServer>;
  return { item, explorer, servers, executeCommand, output, run, createTestRun };
}

describe('Fix with Greenloop', () => {
  it('fixes our item\'s test, with the loop\'s progress in the run\'s output', async () => {
    const { item, explorer, servers, executeCommand, output, run, createTestRun } = setUp(true);
    const show = vi.fn();
    await fixWithGreenloop(item, { explorer, servers, show });
    expect(executeCommand).toHaveBeenCalledWith('greenloop.fixFailingTests', { testIds: ['tests/t.py::test_add'] });
    expect(createTestRun).toHaveBeenCalledWith(expect.objectContaining({ include: [item] }), 'Greenloop: fix test_add', true);
    expect(output.join('')).toContain('[candidate_asked] candidate 1/4 for add\r\n');
    expect(output.join('')).toContain('[candidate_tested] candidate 1: 2 of 2 pass (best so far)\r\n');
    expect(run.end).toHaveBeenCalled();
    expect(show).toHaveBeenCalledWith({ level: 'info', text: 'Greenloop (green): all tests pass The change was applied.' });
  });

  it('maps the Python extension\'s item from its peek message ({test, message}) to the daemon id', async () => {
    const { explorer, servers, executeCommand } = setUp(false);
    const test = { id: '/w/proj/tests/t.py::TestK::test_p[1]', label: 'test_p[1]', uri: vscode.Uri.file('/w/proj/tests/t.py') };
    await fixWithGreenloop({ test, message: { message: 'boom' } }, { explorer, servers, show: vi.fn() });
    expect(executeCommand).toHaveBeenCalledWith('greenloop.fixFailingTests', { testIds: ['tests/t.py::TestK::test_p[1]'] });
  });

  it('says why when the item is not a test greenloop can run, and starts nothing', async () => {
    const { explorer, servers, executeCommand } = setUp(false);
    const jest = { id: 'src/sum.test.js#adds', label: 'adds', uri: vscode.Uri.file('/w/proj/src/sum.test.js') };
    await fixWithGreenloop(jest, { explorer, servers, show: vi.fn() });
    expect(executeCommand).not.toHaveBeenCalled();
    expect(vscode.window.showErrorMessage).toHaveBeenCalledWith(expect.stringMatching(/^Greenloop: this test is not one greenloop can run: "adds" has the id/));
  });
});
