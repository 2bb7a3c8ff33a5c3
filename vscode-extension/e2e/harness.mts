// Runs a real VS Code for the end-to-end tests: code-server + headless Chromium via playwright-core.

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const EXTENSION_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const REPO_ROOT = resolve(EXTENSION_ROOT, '..');
export const FIXTURES = join(EXTENSION_ROOT, 'e2e', 'fixtures');
export const ARTIFACTS = resolve(process.env.GREENLOOP_E2E_ARTIFACTS ?? join(REPO_ROOT, 'artifacts', 'e2e'));
const CACHE = join(EXTENSION_ROOT, '.e2e-cache');
// Started with this Node directly, so code-server does not need `node` on PATH.
const CODE_SERVER = join(CACHE, 'code-server', 'node_modules', 'code-server', 'out', 'node', 'entry.js');
const VSIX = join(EXTENSION_ROOT, 'dist', 'greenloop.vsix');
const CHROMIUM = process.env.GREENLOOP_E2E_CHROMIUM ?? '/usr/bin/chromium';

/** A scratch folder for one test run (removed by the caller's OS tmp cleaning; kept for debugging). */
export function scratch(name: string): string {
  return mkdtempSync(join(process.env.GREENLOOP_E2E_TMP ?? tmpdir(), `gl-e2e-${name}-`));
}

/** A multi-root workspace file listing `folders` (absolute paths), in a scratch folder. */
export function multiRootWorkspace(folders: string[]): string {
  const file = join(scratch('multi-root'), 'projects.code-workspace');
  writeFileSync(file, JSON.stringify({ folders: folders.map((path) => ({ path })) }, null, 2));
  return file;
}

/** Copies a fixture workspace into a scratch folder (tests never touch the fixtures). */
export function workspaceFrom(fixture: string): string {
  const dir = join(scratch(fixture), fixture);
  cpSync(join(FIXTURES, fixture), dir, { recursive: true });
  return dir;
}

async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const server = createServer();
    server.once('error', rej);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => res(port));
    });
  });
}

/** Waits for a line matching `pattern` on the process's stdout (or stderr). */
function waitForLine(child: ChildProcess, pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
  return new Promise((res, rej) => {
    let seen = '';
    const timer = setTimeout(() => rej(new Error(`timed out waiting for ${pattern}; output:\n${seen}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      const match = seen.match(pattern);
      if (match) {
        clearTimeout(timer);
        res(match);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      rej(new Error(`process exited (${code}) before ${pattern}; output:\n${seen}`));
    });
  });
}

/** Stops a child; `group`: the child leads its own process group (spawned detached), which goes too. */
function stopProcess(child: ChildProcess | undefined, group = false): Promise<void> {
  if (!child || child.pid === undefined) return Promise.resolve();
  const pid = child.pid;
  const signal = (name: NodeJS.Signals): void => {
    try {
      if (group) process.kill(-pid, name);
      else child.kill(name);
    } catch {
      // already gone
    }
  };
  if (child.exitCode !== null) {
    if (group) signal('SIGTERM'); // code-server's extension host outlives it otherwise
    return Promise.resolve();
  }
  return new Promise((res) => {
    const timer = setTimeout(() => {
      signal('SIGKILL');
      res();
    }, 10_000);
    child.once('exit', () => {
      clearTimeout(timer);
      if (group) signal('SIGTERM');
      res();
    });
    signal('SIGTERM');
  });
}

export interface ScriptedModel {
  baseUrl: string;
  stop(): Promise<void>;
  requests(): Promise<{ step: string | null }[]>;
}

/** `python3 tests/support/scripted_llm.py --port 0 --script FILE` -> `READY <base_url>`. */
export async function startScriptedModel(script: string): Promise<ScriptedModel> {
  const child = spawn('python3', [join(REPO_ROOT, 'tests', 'support', 'scripted_llm.py'), '--port', '0', '--script', script], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const [, baseUrl] = await waitForLine(child, /READY (\S+)/, 30_000);
  const root = new URL(baseUrl);
  return {
    baseUrl,
    stop: () => stopProcess(child),
    requests: async () => (await fetch(`${root.origin}/_scripted/requests`)).json() as Promise<{ step: string | null }[]>,
  };
}

/** Installs the packaged .vsix into a fresh extensions folder (once per test run). */
let extensionsDir: string | undefined;
async function installedExtensions(env: NodeJS.ProcessEnv): Promise<string> {
  if (extensionsDir) return extensionsDir;
  const dir = join(scratch('extensions'), 'extensions');
  mkdirSync(dir, { recursive: true });
  const child = spawn(process.execPath, [CODE_SERVER, '--extensions-dir', dir, '--install-extension', VSIX, '--force'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await waitForLine(child, /successfully installed/i, 120_000);
  await stopProcess(child);
  extensionsDir = dir;
  return dir;
}

export interface CodeServer {
  url: string;
  workspace: string;
  home: string;
  stop(): Promise<void>;
  log(): string;
}

export interface CodeServerOptions {
  workspace: string;
  /** Extra environment of code-server (inherited by the extension host and the greenloop server). */
  env?: NodeJS.ProcessEnv;
  /** User settings. */
  settings?: Record<string, unknown>;
  /** Workspace trust on (folders open in Restricted Mode, without the startup dialog); default off. */
  trust?: boolean;
}

/** Starts code-server with scratch user data, XDG dirs and the packaged extension; waits for /healthz. */
export async function startCodeServer(options: CodeServerOptions): Promise<CodeServer> {
  const home = scratch('home');
  const xdg = {
    XDG_CONFIG_HOME: join(home, 'config'),
    XDG_DATA_HOME: join(home, 'data'),
    XDG_CACHE_HOME: join(home, 'cache'),
  };
  // VSCODE_CLI: VS Code keeps this environment instead of resolving a login shell's, so the
  // PATH a test gives is the PATH the extension host and the greenloop server see.
  const baseEnv: NodeJS.ProcessEnv = { ...process.env, ...xdg, HOME: home, VSCODE_CLI: '1' };
  const extensions = await installedExtensions(baseEnv);
  const userData = join(home, 'user-data');
  mkdirSync(join(userData, 'User'), { recursive: true });
  const settings = {
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'telemetry.telemetryLevel': 'off',
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'security.workspace.trust.enabled': options.trust === true,
    'security.workspace.trust.startupPrompt': 'never',
    'security.workspace.trust.banner': 'never', // it covers the top edge the palette helper clicks
    'files.autoSave': 'off',
    'window.restoreWindows': 'none',
    'git.openRepositoryInParentFolders': 'never',
    'git.enabled': false,
    ...options.settings,
  };
  writeFileSync(join(userData, 'User', 'settings.json'), JSON.stringify(settings, null, 2));
  const config = join(home, 'code-server.yaml');
  writeFileSync(config, 'auth: none\ncert: false\n');
  const port = await freePort();
  const args = [
    '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry', '--disable-update-check',
    ...(options.trust ? [] : ['--disable-workspace-trust']), '--config', config, '--user-data-dir', userData, '--extensions-dir', extensions,
    options.workspace,
  ];
  let output = '';
  // detached: its own process group, so stopping it also ends the extension host it forks
  const child = spawn(process.execPath, [CODE_SERVER, ...args], {
    env: { ...baseEnv, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`code-server exited (${child.exitCode}):\n${output}`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stopProcess(child, true);
      throw new Error(`code-server did not answer /healthz within 60 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return { url, workspace: options.workspace, home, stop: () => stopProcess(child, true), log: () => output };
}

export interface Workbench {
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

/** Headless Chromium on the workbench of `folder` (or a `.code-workspace` file), ready when `.monaco-workbench` shows. */
export async function openWorkbench(server: CodeServer, folder = server.workspace): Promise<Workbench> {
  const context = await chromium.launchPersistentContext(join(server.home, 'chromium-profile'), {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1400, height: 900 },
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const kind = folder.endsWith('.code-workspace') ? 'workspace' : 'folder';
  await page.goto(`${server.url}/?${kind}=${encodeURIComponent(folder)}`);
  await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
  return { context, page, close: () => context.close() };
}

/** Runs a palette command by its title ("Greenloop: Fix Failing Tests"). */
export async function runCommand(page: Page, title: string): Promise<void> {
  await openPalette(page, title);
  const item = page
    .locator('.quick-input-list .monaco-list-row')
    .filter({ has: page.locator('.label-name', { hasText: exactly(title) }) })
    .first();
  await item.waitFor({ timeout: 20_000 });
  await item.click();
}

/** Opens the command palette with `>query` typed. */
export async function openPalette(page: Page, query: string): Promise<void> {
  await page.locator('.monaco-workbench').click({ position: { x: 700, y: 5 } }).catch(() => undefined);
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget .quick-input-box input');
  await input.waitFor({ timeout: 10_000 });
  await input.fill(`>${query}`);
}

/**
 * Types into the quick input whose title contains `step` (input box or quick pick) and accepts.
 * Waiting for the title matters: consecutive prompts reuse the same widget.
 */
export async function answerQuickInput(page: Page, step: string, text: string): Promise<void> {
  const widget = page.locator('.quick-input-widget', { has: page.locator('.quick-input-title', { hasText: step }) });
  await widget.waitFor({ state: 'visible', timeout: 20_000 });
  const input = widget.locator('.quick-input-box input');
  await input.fill(text);
  await page.waitForTimeout(300); // let the prompt validate / filter the typed text
  await input.press('Enter');
  await widget.waitFor({ state: 'hidden', timeout: 20_000 });
}

/** Waits for a notification whose text matches, and returns its element. */
export async function notification(page: Page, text: RegExp | string, timeout = 60_000) {
  const toast = page.locator('.notifications-toasts .notification-list-item', {
    has: page.locator('.notification-list-item-message', { hasText: text }),
  });
  await toast.first().waitFor({ timeout });
  return toast.first();
}

/** Clicks a button of a notification. */
export async function clickNotificationButton(page: Page, text: RegExp | string, button: string, timeout = 60_000) {
  const toast = await notification(page, text, timeout);
  await toast.locator('.monaco-button', { hasText: button }).first().click();
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const file = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file });
  return file;
}

/** Runs a test body; on failure keeps a screenshot and the code-server log as artifacts. */
export async function withArtifacts(name: string, page: Page | undefined, server: CodeServer | undefined, body: () => Promise<void>) {
  try {
    await body();
  } catch (error) {
    if (page) await screenshot(page, `${name}-failure`).catch(() => undefined);
    if (server) {
      mkdirSync(ARTIFACTS, { recursive: true });
      writeFileSync(join(ARTIFACTS, `${name}-code-server.log`), server.log());
      for (const log of extensionLogs(server.home)) cpSync(log, join(ARTIFACTS, `${name}-greenloop-output.log`));
    }
    throw error;
  }
}

/** The Python that has greenloop installed (the one the tests run with). */
export function greenloopPython(): string {
  const python = process.env.GREENLOOP_E2E_PYTHON ?? 'python3';
  return execFileSync(python, ['-c', 'import greenloop, sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
}

/** Environment for code-server (and so the greenloop server): the scripted model, a fast sandbox. */
export function greenloopEnv(model: ScriptedModel): NodeJS.ProcessEnv {
  return {
    PATH: `${dirname(greenloopPython())}${delimiter}${process.env.PATH ?? ''}`,
    GREENLOOP_LLM__BASE_URL: model.baseUrl,
    GREENLOOP_LLM__MODEL: 'scripted',
    GREENLOOP_LOCAL_MODEL__ENABLED: 'false',
    GREENLOOP_SANDBOX__BACKEND: process.env.GREENLOOP_E2E_SANDBOX ?? 'local',
    // the scenarios script the model's replies; the small edits tried before it (loop.small_edits) would fix calc alone
    GREENLOOP_LOOP__SMALL_EDITS: '0',
  };
}

/** Waits until the status bar says the server runs (no run yet: the beaker icon). */
export async function waitForServer(page: Page, timeout = 60_000): Promise<void> {
  await waitForStatusIcon(page, 'beaker', timeout);
}

/** Waits until the Greenloop status bar item shows `codicon` (beaker, warning, shield...). */
export async function waitForStatusIcon(page: Page, codicon: string, timeout = 60_000): Promise<void> {
  await page.locator('.statusbar-item', { hasText: 'Greenloop' }).locator(`.codicon-${codicon}`).first().waitFor({ timeout });
}

/** Polls until `check` holds (files, logs: things without a DOM event to wait for). */
export async function waitFor(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Waits until the Greenloop output (all windows of this code-server) has `count` lines matching `pattern`. */
export async function waitForOutput(server: CodeServer, pattern: RegExp, count = 1, timeoutMs = 30_000): Promise<void> {
  const matching = () =>
    extensionLogs(server.home)
      .flatMap((log) => readFileSync(log, 'utf8').split('\n'))
      .filter((line) => pattern.test(line)).length;
  await waitFor(() => matching() >= count, `${count} Greenloop output line(s) matching ${pattern}`, timeoutMs);
}

/** Opens a workspace file in the editor through Quick Open. */
export async function openFile(page: Page, relativePath: string): Promise<void> {
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget .quick-input-box input');
  await input.waitFor({ timeout: 10_000 });
  await input.fill(relativePath);
  const name = exactly(relativePath.split('/').pop() ?? relativePath);
  const row = page.locator('.quick-input-list .monaco-list-row').filter({ has: page.locator('.label-name', { hasText: name }) });
  await row.first().click();
  await page.locator('.tab.active').filter({ has: page.locator('.label-name', { hasText: name }) }).waitFor({ timeout: 10_000 });
}

/** A regular expression matching exactly `text` (surrounding blanks allowed). */
export function exactly(text: string): RegExp {
  return new RegExp(`^\\s*${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`);
}

/** The Problems panel's rows (opens the panel). */
export async function problems(page: Page): Promise<string[]> {
  await runCommand(page, 'View: Focus Problems (Errors, Warnings, Infos)');
  const panel = page.locator('.markers-panel');
  await panel.waitFor({ timeout: 10_000 });
  return panel.locator('.monaco-list-row').allInnerTexts();
}

/** The Greenloop output channel's log files of a code-server home. */
export function extensionLogs(home: string): string[] {
  const logs = join(home, 'user-data', 'logs');
  if (!existsSync(logs)) return [];
  return readdirSync(logs, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('Greenloop.log'))
    .map((f) => join(logs, f));
}

/**
 * Accepts the edit shown in the Refactor Preview. Edits that need confirmation start unchecked
 * there (VS Code's rule), so a person ticks each file, then presses Apply.
 */
export async function acceptRefactorPreview(page: Page, timeout: number): Promise<void> {
  const panel = page.locator('.bulk-edit-panel');
  const apply = panel.locator('.monaco-button', { hasText: 'Apply' });
  await apply.waitFor({ timeout });
  const files = panel.locator('.monaco-list-row[aria-level="1"] input[type=checkbox]');
  await files.first().waitFor({ timeout: 10_000 });
  for (const box of await files.all()) {
    if (!(await box.isChecked())) await box.check();
  }
  await apply.click();
}
