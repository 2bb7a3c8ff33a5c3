// The "Greenloop" test controller: items from the daemon's discovery, a Run profile that runs them in the
// sandbox, and results (diffs, places, stack frames) from any greenloop test run.

import * as vscode from 'vscode';
import { folderKey, type FolderServers } from './folderServers';
import type { GreenloopServer } from './languageServer';
import {
  DISCOVER_TESTS,
  RUN_TEST_ITEMS,
  type DiscoverTestsResult,
  type RunTestItemsParams,
  type TestProblem,
  type TestResult,
  type TestResultsParams,
} from './protocol';
import { treePlace } from './testIds';

/** What an item of ours is: its folder's key and, for one test, the daemon's id. */
export interface OwnItem {
  folder: string;
  testId?: string;
}

const REDISCOVER_DELAY = 1000; // ms after a save of a test file
const TEST_FILE = /(^|\/)(test_[^/]*\.py|[^/]*_test\.py|[^/]*\.(test|spec)\.[cm]?[jt]s|tests?\/.*\.rs)$/;

export class TestExplorer implements vscode.Disposable {
  readonly controller = vscode.tests.createTestController('greenloop', 'Greenloop');
  private readonly own = new Map<string, OwnItem>();
  private readonly discovered = new Set<string>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly disposables: vscode.Disposable[] = [this.controller];

  constructor(
    private readonly servers: FolderServers<GreenloopServer>,
    private readonly output: vscode.LogOutputChannel,
  ) {
    this.controller.resolveHandler = async (item) => {
      if (!item) await this.discoverAll();
    };
    this.controller.refreshHandler = () => this.discoverAll();
    this.controller.createRunProfile('Run in the greenloop sandbox', vscode.TestRunProfileKind.Run, (request, token) => this.run(request, token), true);
    this.disposables.push(
      vscode.workspace.onDidSaveTextDocument((doc) => this.saved(doc.uri)),
      { dispose: () => this.timers.forEach((t) => clearTimeout(t)) },
    );
  }

  /** What an item is when it is ours (undefined: another controller's, e.g. the Python extension's). */
  lookup(item: { id: string }): OwnItem | undefined {
    return this.own.get(item.id);
  }

  /** The daemon ids of an item of ours: itself, or the tests under it. */
  leafIds(item: vscode.TestItem): string[] {
    const meta = this.own.get(item.id);
    if (meta?.testId) return [meta.testId];
    const ids: string[] = [];
    item.children.forEach((child) => ids.push(...this.leafIds(child)));
    return ids;
  }

  itemOf(folder: string, testId: string): vscode.TestItem | undefined {
    const place = treePlace(testId);
    const path = [folder, ...(place.file ? [`${folder}|${place.file}`] : []), ...place.parents.map(([id]) => `${folder}|${id}`), `${folder}|${testId}`];
    let items = this.controller.items;
    let found: vscode.TestItem | undefined;
    for (const id of path) {
      found = items.get(id);
      if (!found) return undefined;
      items = found.children;
    }
    return found;
  }

  async discoverAll(): Promise<void> {
    // A window without folders has no tests to list (its server is there for Generate Project).
    await Promise.all(this.servers.all.filter((server) => server.folder).map((server) => this.discover(server)));
  }

  async discover(server: GreenloopServer): Promise<void> {
    const key = folderKey(server.folder);
    const root = this.folderItem(server);
    root.busy = true;
    try {
      const found = await server.request<DiscoverTestsResult>(DISCOVER_TESTS, {});
      this.discovered.add(key);
      this.fill(root, key, found);
    } catch (error) {
      root.error = `greenloop could not list the tests: ${messageOf(error)}`;
      this.output.error(`${server.label}: discovering tests: ${messageOf(error)}`);
    } finally {
      root.busy = false;
    }
  }

  private folderItem(server: GreenloopServer): vscode.TestItem {
    const key = folderKey(server.folder);
    let root = this.controller.items.get(key);
    if (!root) {
      root = this.controller.createTestItem(key, server.folder?.name ?? 'Greenloop', server.folder?.uri);
      this.own.set(key, { folder: key });
      this.controller.items.add(root);
    }
    return root;
  }

  private fill(root: vscode.TestItem, key: string, found: DiscoverTestsResult): void {
    for (const id of [...this.own.keys()]) if (id.startsWith(`${key}|`)) this.own.delete(id);
    root.children.replace([]);
    for (const test of found.tests) {
      const place = treePlace(test.id);
      const uri = test.uri ? vscode.Uri.parse(test.uri) : undefined;
      let parent = root;
      const chain: [string, string, vscode.Uri | undefined][] = [
        ...(place.file ? [[place.file, place.file, uri] as [string, string, vscode.Uri | undefined]] : []),
        ...place.parents.map(([id, label]): [string, string, vscode.Uri | undefined] => [id, label, uri]),
      ];
      for (const [id, label, at] of chain) parent = this.child(parent, key, id, label, at);
      const item = this.child(parent, key, test.id, place.label, uri);
      this.own.set(item.id, { folder: key, testId: test.id });
      if (test.line !== null && test.line !== undefined) item.range = new vscode.Range(test.line, 0, test.line, 0);
      if (item.parent && !item.parent.range && item.range && this.own.get(item.parent.id)?.testId === undefined && place.label.startsWith('[')) {
        item.parent.range = item.range; // a parametrized function's node sits on its def line
      }
    }
    root.error = problemsText(found.problems, found.message);
  }

  private child(parent: vscode.TestItem, key: string, id: string, label: string, uri: vscode.Uri | undefined): vscode.TestItem {
    const full = `${key}|${id}`;
    let item = parent.children.get(full);
    if (!item) {
      item = this.controller.createTestItem(full, label, uri);
      this.own.set(full, { folder: key });
      parent.children.add(item);
    }
    return item;
  }

  private saved(uri: vscode.Uri): void {
    const server = this.servers.forUri(uri);
    if (!server || !TEST_FILE.test(uri.path)) return;
    const key = folderKey(server.folder);
    if (!this.discovered.has(key)) return; // only folders the Testing view has shown
    clearTimeout(this.timers.get(key));
    this.timers.set(key, setTimeout(() => void this.discover(server), REDISCOVER_DELAY));
  }

  private async run(request: vscode.TestRunRequest, token: vscode.CancellationToken): Promise<void> {
    if (this.controller.items.size === 0) await this.discoverAll();
    const roots: vscode.TestItem[] = [];
    if (request.include) roots.push(...request.include);
    else this.controller.items.forEach((item) => roots.push(item));
    const excluded = new Set((request.exclude ?? []).map((item) => item.id));
    const byFolder = new Map<string, { ids: Set<string>; whole: boolean }>();
    for (const item of roots) {
      const meta = this.own.get(item.id);
      if (!meta || excluded.has(item.id)) continue;
      const entry = byFolder.get(meta.folder) ?? { ids: new Set<string>(), whole: false };
      entry.whole ||= item.id === meta.folder && excluded.size === 0;
      for (const id of this.leafIds(item)) if (!excluded.has(`${meta.folder}|${id}`)) entry.ids.add(id);
      byFolder.set(meta.folder, entry);
    }
    const run = this.controller.createTestRun(request);
    try {
      await Promise.all(
        [...byFolder].map(async ([folder, { ids, whole }]) => {
          const server = this.servers.all.find((s) => folderKey(s.folder) === folder);
          if (!server) return;
          for (const id of ids) {
            const item = this.itemOf(folder, id);
            if (item) run.started(item);
          }
          const params: RunTestItemsParams = whole ? {} : { testIds: [...ids] };
          try {
            const answer = await server.request<TestResultsParams>(RUN_TEST_ITEMS, params, token);
            this.apply(run, folder, answer, server);
          } catch (error) {
            if (token.isCancellationRequested) return;
            const message = new vscode.TestMessage(`greenloop could not run the tests: ${messageOf(error)}`);
            for (const id of ids) {
              const item = this.itemOf(folder, id);
              if (item) run.errored(item, message);
            }
          }
        }),
      );
    } finally {
      run.end();
    }
  }

  /** Results of a run the Testing view did not start: shown as a run of their own. */
  async showResults(server: GreenloopServer, params: TestResultsParams): Promise<void> {
    const folder = folderKey(server.folder);
    if (!this.discovered.has(folder)) return;
    if (params.results.some((r) => !this.itemOf(folder, r.id))) await this.discover(server);
    const run = this.controller.createTestRun(new vscode.TestRunRequest(), 'Greenloop', false);
    this.apply(run, folder, params, server);
    run.end();
  }

  private apply(run: vscode.TestRun, folder: string, params: TestResultsParams, server: GreenloopServer): void {
    for (const result of params.results) {
      const item = this.itemOf(folder, result.id);
      if (!item) continue;
      const ms = result.duration * 1000;
      if (result.outcome === 'passed') run.passed(item, ms);
      else if (result.outcome === 'skipped') run.skipped(item);
      else {
        const message = testMessage(result);
        if (result.output) run.appendOutput(`${result.id}\r\n${result.output.replace(/\r?\n/g, '\r\n')}\r\n`, message.location, item);
        if (result.outcome === 'failed') run.failed(item, message, ms);
        else run.errored(item, message, ms);
      }
    }
    for (const id of params.missing) {
      const item = this.itemOf(folder, id);
      const text = `${id} no longer exists (renamed or removed since the list was made); the list was refreshed.`;
      if (item) run.errored(item, new vscode.TestMessage(text));
      run.appendOutput(`${text}\r\n`);
    }
    for (const problem of params.problems) run.appendOutput(`${problem.id}: ${problem.message}\r\n${problem.text.replace(/\r?\n/g, '\r\n')}\r\n`);
    const root = this.controller.items.get(folder);
    if (root && params.problems.length) root.error = problemsText(params.problems, '');
    if (params.missing.length) void this.discover(server);
  }

  dispose(): void {
    this.disposables.forEach((d) => d.dispose());
  }
}

/** A failure as the peek view shows it: a diff where the report has expected and actual, its place, its frames. */
export function testMessage(result: TestResult): vscode.TestMessage {
  const message =
    result.expected !== null && result.actual !== null
      ? vscode.TestMessage.diff(result.message, result.expected, result.actual)
      : new vscode.TestMessage(result.message);
  if (result.uri && result.line !== null) {
    message.location = new vscode.Location(vscode.Uri.parse(result.uri), new vscode.Position(result.line, 0));
  }
  // TestMessageStackFrame is VS Code 1.93+; older hosts show the message without frames.
  const api = vscode as unknown as { TestMessageStackFrame?: new (label: string, uri?: vscode.Uri, position?: vscode.Position) => unknown };
  if (api.TestMessageStackFrame && result.frames.length) {
    const Frame = api.TestMessageStackFrame;
    (message as { stackTrace?: unknown[] }).stackTrace = result.frames.map(
      (f) => new Frame(f.label, vscode.Uri.parse(f.uri), new vscode.Position(f.line, 0)),
    );
  }
  return message;
}

/** The folder item's error: the files that did not load, or why there are no tests ("" clears it). */
export function problemsText(problems: TestProblem[], message: string): vscode.MarkdownString | undefined {
  const lines = problems.map((p) => `**${p.id}**: ${p.message}`);
  if (message) lines.unshift(message);
  return lines.length ? new vscode.MarkdownString(lines.join('\n\n')) : undefined;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
