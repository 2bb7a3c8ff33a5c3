import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as vscode from 'vscode';
import { InterpreterListing } from '../../src/interpreterListing';
import type { InterpreterPackagesParams } from '../../src/protocol';
import type { ActiveEnvironmentChange } from '../../src/pythonEnvironment';

const folder = (path: string) => ({ uri: vscode.Uri.file(path), name: path, index: 0 }) as unknown as vscode.WorkspaceFolder;
const here = folder('/ws/app');
const there = folder('/ws/other');

/** An interpreter that answers `-m pip list --format json` with six at `six`, after `sleep` seconds. */
function interpreter(dir: string, name: string, six: string, sleep = 0): string {
  const path = join(dir, name);
  const rows = JSON.stringify([{ name: 'six', version: six }]);
  writeFileSync(path, `#!/bin/sh\nsleep ${sleep}\necho '${rows}'\n`);
  chmodSync(path, 0o755);
  return path;
}

/** The Python extension's environments API, as much of it as the listing uses; `select` is the user picking one. */
function pythonExtension(active: string | undefined) {
  const changes = new vscode.EventEmitter<ActiveEnvironmentChange>();
  let current = active;
  const api = {
    environments: {
      getActiveEnvironmentPath: () => ({ id: current ?? 'none', path: current ?? 'none' }),
      resolveEnvironment: async (env: { path: string }) =>
        env.path === 'none' ? undefined : { executable: { uri: vscode.Uri.file(env.path) } },
      onDidChangeActiveEnvironmentPath: changes.event,
    },
  };
  vi.mocked(vscode.extensions.getExtension).mockReturnValue({ isActive: true, exports: api } as never);
  return {
    select(path: string | undefined, resource: ActiveEnvironmentChange['resource'] = here) {
      current = path;
      changes.fire({ id: path ?? 'none', path: path ?? 'none', resource });
    },
  };
}

function listingOf(send?: (l: InterpreterPackagesParams) => Promise<void>, timeoutMs?: number) {
  const sent: InterpreterPackagesParams[] = [];
  const lines: string[] = [];
  const log = { info: (l: string) => lines.push(`info ${l}`), warn: (l: string) => lines.push(`warn ${l}`) };
  const listing = new InterpreterListing(
    here,
    send ?? (async (l) => void sent.push(l)),
    log,
    'Greenloop',
    timeoutMs,
  );
  return { listing, sent, lines };
}

const sixOf = (l: InterpreterPackagesParams) => l.packages.find((p) => p.name === 'six')?.version;

describe('the interpreter listing across interpreter changes', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'greenloop-listing-'));
    (vscode.workspace as { workspaceFolders: unknown }).workspaceFolders = [here, there];
  });
  afterEach(() => {
    vi.mocked(vscode.extensions.getExtension).mockReset();
    (vscode.workspace as { workspaceFolders: unknown }).workspaceFolders = undefined;
  });

  it("sends the listing at start, and the new interpreter's when the user picks another", async () => {
    const python = pythonExtension(interpreter(dir, 'old', '1.14.0'));
    const { listing, sent, lines } = listingOf();
    await listing.start();
    expect(sent.map(sixOf)).toEqual(['1.14.0']);
    const newer = interpreter(dir, 'new', '1.15.0');
    python.select(newer);
    await vi.waitFor(() => expect(sent).toHaveLength(2));
    expect(sent[1]).toMatchObject({ interpreter: newer, error: null });
    expect(sixOf(sent[1])).toBe('1.15.0');
    expect(lines).toEqual([`info Greenloop: interpreter changed to ${newer}: 1 packages listed for the next fix run`]);
    listing.dispose();
  });

  it('drops the listing of an interpreter the user has since left', async () => {
    const python = pythonExtension(interpreter(dir, 'first', '1.13.0'));
    const { listing, sent } = listingOf();
    await listing.start();
    python.select(interpreter(dir, 'slow', '1.14.0', 1));
    await new Promise((r) => setTimeout(r, 300)); // its listing is under way
    python.select(interpreter(dir, 'last', '1.15.0'));
    await vi.waitFor(() => expect(sent).toHaveLength(2));
    await new Promise((r) => setTimeout(r, 1500)); // the slow listing has ended by now
    expect(sent.map(sixOf)).toEqual(['1.13.0', '1.15.0']);
    listing.dispose();
  });

  it('follows no change once disposed with its client, and drops a listing still being made', async () => {
    const python = pythonExtension(interpreter(dir, 'first', '1.13.0'));
    const { listing, sent } = listingOf();
    await listing.start();
    python.select(interpreter(dir, 'slow', '1.14.0', 1));
    await new Promise((r) => setTimeout(r, 300)); // its listing is under way
    listing.dispose();
    python.select(interpreter(dir, 'after', '1.15.0'));
    await new Promise((r) => setTimeout(r, 1500));
    expect(sent.map(sixOf)).toEqual(['1.13.0']);
  });

  it("ignores another folder's change", async () => {
    const python = pythonExtension(interpreter(dir, 'first', '1.13.0'));
    const { listing, sent } = listingOf();
    await listing.start();
    python.select(interpreter(dir, 'elsewhere', '1.15.0'), there);
    python.select(interpreter(dir, 'file', '1.15.0'), vscode.Uri.file('/ws/other/x.py'));
    await new Promise((r) => setTimeout(r, 500));
    expect(sent).toHaveLength(1);
    listing.dispose();
  });

  it('sends the reason, and says it, when the new listing times out', async () => {
    const python = pythonExtension(interpreter(dir, 'first', '1.13.0'));
    const { listing, sent, lines } = listingOf(undefined, 300);
    await listing.start();
    const slow = interpreter(dir, 'slow', '1.14.0', 5);
    python.select(slow);
    await vi.waitFor(() => expect(sent).toHaveLength(2));
    expect(sent[1]).toEqual({ interpreter: slow, packages: [], error: 'pip list timed out after 0.3s' });
    expect(lines).toEqual([
      `warn Greenloop: no package listing of ${slow} (pip list timed out after 0.3s); ` +
        "the sandbox's versions come from the project's files",
    ]);
    listing.dispose();
  });

  it('takes back the old listing when the extension then names no interpreter', async () => {
    const python = pythonExtension(interpreter(dir, 'first', '1.13.0'));
    const { listing, sent, lines } = listingOf();
    await listing.start();
    python.select(undefined);
    await vi.waitFor(() => expect(sent).toHaveLength(2));
    expect(sent[1]).toEqual({ interpreter: 'none', packages: [], error: 'the Python extension names no interpreter' });
    expect(lines[0]).toMatch(/^warn Greenloop: the Python extension names no interpreter now/);
    listing.dispose();
  });

  it('says a missing Python extension in one line and sends nothing', async () => {
    const { listing, sent, lines } = listingOf();
    await listing.start();
    expect(sent).toEqual([]);
    expect(lines).toEqual([
      "info Greenloop: no Python extension (ms-python.python): the sandbox's versions come from the project's files, " +
        "not an interpreter's",
    ]);
  });

  it('says a send that fails (the client stopped) instead of throwing', async () => {
    pythonExtension(interpreter(dir, 'first', '1.13.0'));
    const { listing, lines } = listingOf(async () => Promise.reject(new Error('Client is not running')));
    await listing.start();
    expect(lines).toEqual(["warn Greenloop: the interpreter's packages were not sent: Error: Client is not running"]);
    listing.dispose();
  });
});
