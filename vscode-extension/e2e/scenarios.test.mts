// End to end with the real daemon, the real sandbox and the scripted model: fix failing tests,
// generate a project, and answer an inline feedback comment, each in a real VS Code.

import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, test } from 'node:test';
import {
  FIXTURES,
  acceptRefactorPreview,
  answerQuickInput,
  clickNotificationButton,
  greenloopEnv,
  greenloopPython,
  notification,
  openFile,
  openWorkbench,
  problems,
  runCommand,
  scratch,
  screenshot,
  startCodeServer,
  startScriptedModel,
  waitFor,
  waitForServer,
  withArtifacts,
  workspaceFrom,
  type CodeServer,
  type ScriptedModel,
  type Workbench,
} from './harness.mjs';

const VERDICT = 'Did it run / work / perfect?';
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

/** Scripted model + code-server on a copy of `fixture` + a workbench whose greenloop server runs. */
async function open(fixture: string, script: string, workspace = workspaceFrom(fixture)): Promise<Workbench> {
  model = await startScriptedModel(join(FIXTURES, script));
  server = await startCodeServer({
    workspace,
    env: greenloopEnv(model),
    settings: { 'greenloop.server.path': greenloopPython(), 'greenloop.trace.server': 'verbose' },
  });
  bench = await openWorkbench(server);
  return bench;
}

test('Fix Failing Tests: the change is accepted in the Refactor Preview, the test passes, the diagnostic goes', { timeout: 300_000 }, async () => {
  const workspace = workspaceFrom('calc');
  const { page } = await open('calc', 'fix.py', workspace);
  await withArtifacts('fix', page, server, async () => {
    await waitForServer(page);
    await openFile(page, 'tests/test_calc.py');
    await runCommand(page, 'Greenloop: Run Tests');
    await notification(page, 'Greenloop tests: 1 passed, 1 failed.', LOOP_TIMEOUT);
    const before = await problems(page);
    assert.ok(before.some((row) => row.includes('test_add')), `no diagnostic for test_add in:\n${before.join('\n')}`);
    await screenshot(page, 'fix-1-diagnostic');

    await runCommand(page, 'Greenloop: Fix Failing Tests');
    await page.locator('.bulk-edit-panel').waitFor({ timeout: LOOP_TIMEOUT });
    await screenshot(page, 'fix-2-refactor-preview');
    await acceptRefactorPreview(page, 10_000);
    await notification(page, /Greenloop \(green\).*The change was applied/, 60_000);
    await clickNotificationButton(page, VERDICT, 'Perfect');

    // The server republishes the diagnostics from its passing run: Problems is empty.
    await page.locator('.markers-panel .monaco-list-row').first().waitFor({ state: 'detached', timeout: 30_000 });
    // The accepted change is in the editor (not yet saved); the server tests the unsaved buffer.
    await openFile(page, 'calc.py');
    assert.match(await editorText(page), /return a \+ b/);
    assert.match(readFileSync(join(workspace, 'calc.py'), 'utf8'), /return a - b/);
    await runCommand(page, 'Notifications: Clear All Notifications');
    await runCommand(page, 'Greenloop: Run Tests');
    await notification(page, 'Greenloop tests: 2 passed, 0 failed.', LOOP_TIMEOUT);
    assert.deepEqual(await problems(page), []);
    await screenshot(page, 'fix-3-green');
    // Saving writes the fix to the user's file.
    await page.locator('.editor-instance .view-lines').first().click();
    await page.keyboard.press('Control+S');
    await waitFor(() => readFileSync(join(workspace, 'calc.py'), 'utf8').includes('return a + b'), 'calc.py saved with the fix');
  });
});

test('Generate Project...: the planned files are created and the folder opens', { timeout: 300_000 }, async () => {
  const home = scratch('generate');
  const outDir = join(home, 'greeter');
  const { page } = await open('words', 'generate.py');
  await withArtifacts('generate', page, server, async () => {
    await waitForServer(page);
    await runCommand(page, 'Greenloop: Generate Project...');
    await answerQuickInput(page, '(1/3)', 'A library that greets people by name, with tests');
    await answerQuickInput(page, '(2/3)', 'python');
    await answerQuickInput(page, '(3/3)', outDir);
    await notification(page, /Greenloop generated \d+ files in .*greeter \(green\)/, LOOP_TIMEOUT);
    for (const file of ['greeter/__init__.py', 'greeter/core.py', 'tests/test_core.py']) {
      assert.ok(existsSync(join(outDir, file)), `${file} was not generated`);
    }
    assert.match(readFileSync(join(outDir, 'greeter', 'core.py'), 'utf8'), /return f"Hello, \{name\}!"/);
    await screenshot(page, 'generate-1-done');
    await clickNotificationButton(page, 'Greenloop generated', 'Open Folder');
    // The window reloads on the generated folder.
    await page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'greeter' }).first().waitFor({ timeout: 60_000 });
    await page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'tests' }).first().waitFor();
    await screenshot(page, 'generate-2-opened');
  });
});

test('Inline feedback: the comment gets the server\'s reply in its thread', { timeout: 300_000 }, async () => {
  const { page } = await open('words', 'feedback.py');
  await withArtifacts('feedback', page, server, async () => {
    await waitForServer(page);
    await openFile(page, 'words.py');
    // Put the cursor on the `return` line (line 5) and start a thread there.
    await runCommand(page, 'Go to Line/Column...');
    await page.keyboard.type('5');
    await page.keyboard.press('Enter');
    await runCommand(page, 'Comments: Add Comment on Current Selection');
    const widget = page.locator('.review-widget');
    await widget.locator('textarea, .monaco-editor').first().waitFor({ timeout: 20_000 });
    await page.keyboard.type('this should ignore repeated spaces between words');
    await widget.locator('.monaco-button', { hasText: 'Ask Greenloop' }).click();

    await acceptRefactorPreview(page, LOOP_TIMEOUT);
    await widget.locator('.review-comment', { hasText: 'Change applied' }).waitFor({ timeout: 60_000 });
    const thread = await widget.innerText();
    assert.match(thread, /this should ignore repeated spaces between words/);
    assert.match(thread, /Change applied/);
    assert.match(await editorText(page), /return len\(text\.split\(\)\)/);
    await screenshot(page, 'feedback-reply');
  });
});

/** The visible text of the active editor (non-breaking spaces as spaces). */
async function editorText(page: Workbench['page']): Promise<string> {
  const text = await page.locator('.editor-group-container.active .editor-instance .view-lines').first().innerText();
  return text.replace(/\u00a0/g, ' ');
}
