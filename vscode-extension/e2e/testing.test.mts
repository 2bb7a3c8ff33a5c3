// End to end in the Testing view: the Greenloop controller lists the fixture's tests, runs them in the sandbox,
// shows the failure with its diff, and "Fix with Greenloop" on the failed item opens the fix in the Refactor Preview.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { afterEach, test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import {
  FIXTURES,
  greenloopEnv,
  greenloopPython,
  openFile,
  openWorkbench,
  runCommand,
  screenshot,
  startCodeServer,
  startScriptedModel,
  waitForServer,
  withArtifacts,
  workspaceFrom,
  type CodeServer,
  type ScriptedModel,
  type Workbench,
} from './harness.mjs';

const LOOP_TIMEOUT = Number(process.env.GREENLOOP_E2E_LOOP_TIMEOUT ?? 180_000);

let model: ScriptedModel | undefined;
let server: CodeServer | undefined;
let bench: Workbench | undefined;

afterEach(async () => {
  await bench?.close();
  await server?.stop();
  await model?.stop();
  bench = server = model = undefined;
});

/** A row of the Test Explorer tree, by its label. */
function testRow(page: Page, label: string): Locator {
  return page.locator('.test-explorer .monaco-list-row', { hasText: label }).first();
}

/** Expands the Test Explorer's collapsed rows until `label` shows. */
async function expandUntil(page: Page, label: string, timeout = LOOP_TIMEOUT): Promise<Locator> {
  const deadline = Date.now() + timeout;
  const row = testRow(page, label);
  while (!(await row.isVisible())) {
    if (Date.now() > deadline) throw new Error(`the Test Explorer never showed ${label}`);
    const collapsed = page.locator('.test-explorer .monaco-list-row[aria-expanded="false"]');
    if (await collapsed.count()) await collapsed.first().locator('.monaco-tl-twistie').click();
    else await page.waitForTimeout(500);
  }
  return row;
}

test('Testing view: lists the tests, runs them, shows the diff, and fixes the failed one from its context menu', { timeout: 420_000 }, async () => {
  model = await startScriptedModel(join(FIXTURES, 'fix.py'));
  server = await startCodeServer({
    workspace: workspaceFrom('calc'),
    env: greenloopEnv(model),
    settings: {
      'greenloop.server.path': greenloopPython(),
      'greenloop.trace.server': 'verbose',
      'testing.automaticallyOpenPeekView': 'failureAnywhere',
    },
  });
  bench = await openWorkbench(server);
  const { page } = bench;
  await withArtifacts('testing', page, server, async () => {
    await waitForServer(page);
    await openFile(page, 'tests/test_calc.py');
    await runCommand(page, 'Testing: Focus on Test Explorer View');
    const add = await expandUntil(page, 'test_add');
    await expandUntil(page, 'test_double_zero');
    await screenshot(page, 'testing-1-tests-listed');

    await runCommand(page, 'Test: Run All Tests');
    await add.locator('.codicon-testing-failed-icon').waitFor({ timeout: LOOP_TIMEOUT });
    await testRow(page, 'test_double_zero').locator('.codicon-testing-passed-icon').waitFor({ timeout: 10_000 });
    // The peek view shows the assertion as a diff of expected (5) and actual (-1).
    const peek = page.locator('.test-output-peek');
    await peek.waitFor({ timeout: 30_000 });
    const diff = peek.locator('.monaco-diff-editor');
    await diff.first().waitFor({ timeout: 30_000 });
    const shown = (await diff.first().innerText()).replace(/\u00a0/g, ' ');
    assert.match(shown, /5/);
    assert.match(shown, /-1/);
    await screenshot(page, 'testing-2-failure-diff');
    await page.keyboard.press('Escape');

    await add.click({ button: 'right' });
    const fix = page.locator('.context-view .action-item', { hasText: 'Fix with Greenloop' });
    await fix.first().waitFor({ timeout: 10_000 });
    await screenshot(page, 'testing-3-context-menu');
    await fix.first().click();

    const preview = page.locator('.bulk-edit-panel');
    await preview.locator('.monaco-button', { hasText: 'Apply' }).waitFor({ timeout: LOOP_TIMEOUT });
    await preview.locator('.monaco-list-row', { hasText: 'calc.py' }).first().waitFor({ timeout: 10_000 });
    await screenshot(page, 'testing-4-refactor-preview');
  });
});
