// Test ids both ways (pure; unit-tested): the daemon's ids -> the Testing view's tree, and any controller's
// test item (ours, or the Python extension's) -> the id greenloop runs, or why there is none.

/** Where a daemon id sits in the tree: its file, the classes / parametrized function above it, and its label. */
export interface TreePlace {
  /** Workspace-relative file (`tests/test_x.py`); undefined for ids without one (`suite > adds`). */
  file: string | undefined;
  /** Intermediate nodes, outermost first: `[['tests/t.py::TestK', 'TestK'], ['tests/t.py::TestK::test_p', 'test_p']]`. */
  parents: [string, string][];
  label: string;
}

const PARAMS = /^(.*?)(\[.*\])$/s;

/** `tests/t.py::TestK::test_p[1]` -> file tests/t.py, parents TestK and test_p (its parameter sets), label `[1]`. */
export function treePlace(testId: string): TreePlace {
  if (!testId.includes('::')) {
    const parts = testId.split(' > ');
    const label = parts.pop() ?? testId;
    let prefix = '';
    const parents = parts.map((part): [string, string] => {
      prefix = prefix ? `${prefix} > ${part}` : part;
      return [prefix, part];
    });
    return { file: undefined, parents, label };
  }
  const [file, ...rest] = testId.split('::');
  const last = rest.pop() ?? '';
  const parents: [string, string][] = [];
  let prefix = file;
  for (const part of rest) {
    prefix = `${prefix}::${part}`;
    parents.push([prefix, part]);
  }
  const params = PARAMS.exec(last);
  if (params && params[1]) {
    parents.push([`${prefix}::${params[1]}`, params[1]]);
    return { file, parents, label: params[2] };
  }
  return { file, parents, label: last };
}

/** What this module reads of a vscode.TestItem (any controller's). */
export interface TestItemLike {
  id: string;
  label: string;
  uri?: { scheme: string; fsPath: string };
  children?: { size: number };
}

export type TestIdMapping = { ok: true; testId: string } | { ok: false; reason: string };

export const NOT_RUNNABLE = 'this test is not one greenloop can run';

function posix(path: string): string {
  return path.replace(/\\/g, '/');
}

function isAbsolute(path: string): boolean {
  return path.startsWith('/') || /^[A-Za-z]:\//.test(path);
}

/** `path` relative to `folder` (posix), or undefined when it is outside. */
export function relativeTo(folder: string, path: string): string | undefined {
  const root = posix(folder).replace(/\/$/, '');
  const target = posix(path);
  if (!isAbsolute(target)) return target.replace(/^\.\//, '');
  const same = (a: string, b: string) => (/^[A-Za-z]:/.test(a) ? a.toLowerCase() === b.toLowerCase() : a === b);
  if (same(target, root)) return '';
  const head = target.slice(0, root.length + 1);
  return same(head, `${root}/`) ? target.slice(root.length + 1) : undefined;
}

function refuse(item: TestItemLike, why: string): TestIdMapping {
  return { ok: false, reason: `${NOT_RUNNABLE}: "${item.label}" ${why}` };
}

/**
 * The daemon's id of a test item from another controller (the Python extension's pytest or unittest items),
 * given the workspace folder the item's file is in. Its ids are pytest node ids, with the file absolute or
 * relative (`/w/tests/t.py::TestK::test_p[1]`), or unittest's dotted names (`tests.test_x.TestK.test_p`).
 */
export function daemonTestId(item: TestItemLike, folderPath: string | undefined): TestIdMapping {
  if (!folderPath) return refuse(item, 'is not in a workspace folder greenloop serves');
  const at = item.id.indexOf('::');
  if (at > 0) {
    const rel = relativeTo(folderPath, item.id.slice(0, at));
    if (rel === undefined || rel === '') return refuse(item, `is in ${item.id.slice(0, at)}, outside the folder ${folderPath}`);
    return { ok: true, testId: `${rel}::${item.id.slice(at + 2)}` };
  }
  const file = item.uri?.scheme === 'file' ? relativeTo(folderPath, item.uri.fsPath) : undefined;
  if (file?.endsWith('.py')) {
    const module = file.slice(0, -3).replace(/\//g, '.');
    if (item.id.startsWith(`${module}.`)) {
      return { ok: true, testId: `${file}::${item.id.slice(module.length + 1).split('.').join('::')}` };
    }
  }
  if (item.children && item.children.size > 0) return refuse(item, 'is a folder, file or suite, not one test; use "Greenloop: Fix Failing Tests" for all of them');
  return refuse(item, `has the id ${JSON.stringify(item.id)}, which is no pytest or unittest id of a file in ${folderPath}`);
}
