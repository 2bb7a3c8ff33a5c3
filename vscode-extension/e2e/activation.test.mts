// End to end: the extension activates in a real VS Code, lists its commands, and says what to
// install when no greenloop server can be found.

import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import {
  notification,
  openPalette,
  runCommand,
  openWorkbench,
  scratch,
  screenshot,
  startCodeServer,
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
  'Greenloop: Set API Key',
];

let server: CodeServer | undefined;
let bench: Workbench | undefined;

after(async () => {
  await bench?.close();
  await server?.stop();
});

test('without greenloop installed: the commands are listed and the error says what to install', async () => {
  // An empty PATH: no `greenloop`, no `python3`, so nothing can start the server.
  const emptyBin = join(scratch('empty-path'), 'bin');
  mkdirSync(emptyBin);
  server = await startCodeServer({ workspace: workspaceFrom('calc'), env: { PATH: emptyBin } });
  bench = await openWorkbench(server);
  const { page } = bench;
  await withArtifacts('activation', page, server, async () => {
    const toast = await notification(page, /could not find its language server/);
    const message = await toast.locator('.notification-list-item-message').innerText();
    assert.match(message, /python3 -m pip install greenloop/);
    assert.match(message, /greenloop\.server\.path/);
    assert.match(message, /No Python was found on PATH/);
    await screenshot(page, 'activation-server-not-found');

    await openPalette(page, 'Greenloop:');
    const rows = page.locator('.quick-input-list .monaco-list-row');
    await rows.first().waitFor();
    const labels = await rows.allInnerTexts();
    for (const title of TITLES) {
      assert.ok(labels.some((l) => l.includes(title)), `palette lacks "${title}"; it shows:\n${labels.join('\n')}`);
    }
    await screenshot(page, 'activation-palette');
    await page.keyboard.press('Escape');

    // A command looks for the server again and answers with the same advice.
    await runCommand(page, 'Notifications: Clear All Notifications');
    await toast.waitFor({ state: 'detached', timeout: 10_000 });
    await runCommand(page, 'Greenloop: Run Tests');
    const again = await notification(page, /could not find its language server/);
    assert.match(await again.innerText(), /Show Output/);
  });
});
