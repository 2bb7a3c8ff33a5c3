// End to end: the extension activates in a real VS Code, lists its commands, offers to install a
// missing greenloop server once per window (multi-root: once for all folders), and stays off in
// Restricted Mode until the workspace is trusted.

import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { afterEach, test } from 'node:test';
import {
  exactly,
  extensionLogs,
  greenloopPython,
  multiRootWorkspace,
  notification,
  openPalette,
  runCommand,
  openWorkbench,
  scratch,
  screenshot,
  startCodeServer,
  waitForOutput,
  waitForServer,
  waitForStatusIcon,
  withArtifacts,
  workspaceFrom,
  type CodeServer,
  type Workbench,
} from './harness.mjs';

const TITLES = [
  'Greenloop: Generate Project...',
  'Greenloop: Fix Failing Tests',
  'Greenloop: Run Tests',
  'Greenloop: Improve Selection...',
  'Greenloop: Cancel',
  'Greenloop: Show Output',
  'Greenloop: Restart Server',
  'Greenloop: Install the Language Server',
  'Greenloop: Set API Key',
];
const MISSING = /needs its language server/;
const UNTRUSTED = /off in Restricted Mode/;

let server: CodeServer | undefined;
let bench: Workbench | undefined;

afterEach(async () => {
  await bench?.close();
  await server?.stop();
  bench = server = undefined;
});

function toasts(page: Workbench['page'], text: RegExp) {
  return page.locator('.notifications-toasts .notification-list-item', {
    has: page.locator('.notification-list-item-message', { hasText: text }),
  });
}

/** "Developer: Reload Window": a new window (and extension host) after VS Code's orderly shutdown, which saves its state. */
async function reloadWindow(page: Workbench['page']): Promise<void> {
  const loaded = page.waitForEvent('load', { timeout: 60_000 });
  await runCommand(page, 'Developer: Reload Window');
  await loaded;
  await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
}

function output(home: string): string {
  return extensionLogs(home).map((log) => readFileSync(log, 'utf8')).join('\n');
}

test('without greenloop: one Install notice for a two-folder workspace, remembered "Don\'t Show Again"', { timeout: 240_000 }, async () => {
  // An empty PATH: no `greenloop`, no `python3`, so nothing can start the server.
  const emptyBin = join(scratch('empty-path'), 'bin');
  mkdirSync(emptyBin);
  const workspace = multiRootWorkspace([workspaceFrom('calc'), workspaceFrom('words')]);
  server = await startCodeServer({ workspace, env: { PATH: emptyBin } });
  bench = await openWorkbench(server);
  const { page } = bench;
  const cs = server;
  await withArtifacts('activation', page, server, async () => {
    const toast = await notification(page, MISSING);
    const message = await toast.locator('.notification-list-item-message').innerText();
    assert.match(message, /pipx install greenloop/);
    assert.match(message, /greenloop\.server\.path/);
    for (const button of ['Install', "Don't Show Again"]) {
      await toast.locator('.monaco-button', { hasText: exactly(button) }).first().waitFor();
    }
    // Both folders looked for the server; the second one's report was not shown again.
    await waitForOutput(cs, /calc\): Greenloop could not find its language server/);
    await waitForOutput(cs, /words\): Greenloop could not find its language server/);
    await waitForOutput(cs, /not notifying again \(already shown\)/);
    assert.equal(await toasts(page, MISSING).count(), 1);
    await screenshot(page, 'activation-1-first-run-notice');

    await openPalette(page, 'Greenloop:');
    const rows = page.locator('.quick-input-list .monaco-list-row');
    await rows.first().waitFor();
    const labels = await rows.allInnerTexts();
    for (const title of TITLES) {
      assert.ok(labels.some((l) => l.includes(title)), `palette lacks "${title}"; it shows:\n${labels.join('\n')}`);
    }
    await page.keyboard.press('Escape');

    // "Install" opens a terminal that runs the pipx command.
    await toast.locator('.monaco-button', { hasText: exactly('Install') }).first().click();
    await page.locator('.part.panel').getByText('Install greenloop').first().waitFor({ timeout: 20_000 });
    await screenshot(page, 'activation-2-install-terminal');

    // A command in a two-folder window without an editor asks for the folder, then says what to install.
    await runCommand(page, 'Notifications: Clear All Notifications');
    await runCommand(page, 'Greenloop: Run Tests');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'words' }).first().click();
    const again = await notification(page, /could not find its language server/);
    assert.match(await again.innerText(), /Show Output/);

    // A new window shows the notice again until the user chooses "Don't Show Again"...
    await reloadWindow(page);
    const next = await notification(page, MISSING);
    await next.locator('.monaco-button', { hasText: exactly("Don't Show Again") }).first().click();
    await waitForOutput(cs, /the notice is dismissed/);
    // ...after which windows stay quiet: both folders find no server, and nothing pops up.
    await reloadWindow(page);
    await waitForStatusIcon(page, 'warning');
    await waitForOutput(cs, /not notifying again \(dismissed\)/, 2);
    assert.equal(await toasts(page, MISSING).count(), 0);
    await screenshot(page, 'activation-3-dismissed-quiet');
  });
});

test('in Restricted Mode: nothing starts, the message says why, trusting the workspace starts the server', { timeout: 180_000 }, async () => {
  const python = greenloopPython();
  server = await startCodeServer({
    workspace: workspaceFrom('calc'),
    trust: true,
    env: { PATH: `${dirname(python)}${delimiter}${process.env.PATH ?? ''}`, GREENLOOP_LOCAL_MODEL__ENABLED: 'false' },
    settings: { 'greenloop.server.path': python },
  });
  bench = await openWorkbench(server);
  const { page } = bench;
  const home = server.home;
  const cs = server;
  await withArtifacts('untrusted', page, server, async () => {
    const toast = await notification(page, UNTRUSTED);
    assert.match(await toast.innerText(), /Manage Workspace Trust/);
    await waitForStatusIcon(page, 'shield');
    await screenshot(page, 'untrusted-1-message');

    // A run asked for in Restricted Mode gets the same answer, and no server is started.
    await runCommand(page, 'Notifications: Clear All Notifications');
    await toast.waitFor({ state: 'detached', timeout: 10_000 });
    await runCommand(page, 'Greenloop: Run Tests');
    const again = await notification(page, UNTRUSTED);
    assert.doesNotMatch(output(home), /starting .* serve/);

    await again.locator('.monaco-button', { hasText: exactly('Manage Workspace Trust') }).first().click();
    await page.locator('.workspace-trust-editor').getByRole('button', { name: 'Trust', exact: true }).first().click();
    await waitForServer(page);
    await waitForOutput(cs, /starting .* serve/);
    await screenshot(page, 'untrusted-2-trusted-running');
  });
});
