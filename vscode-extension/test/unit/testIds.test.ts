import { describe, expect, it } from 'vitest';
import { itemOfArgument, progressLine } from '../../src/fixTest';
import { daemonTestId, NOT_RUNNABLE, relativeTo, treePlace, type TestItemLike } from '../../src/testIds';

const folder = '/home/u/proj';
const file = (path: string) => ({ scheme: 'file', fsPath: path });

describe('treePlace: daemon ids -> the Testing view tree', () => {
  it('puts a function under its file', () => {
    expect(treePlace('tests/test_x.py::test_add')).toEqual({ file: 'tests/test_x.py', parents: [], label: 'test_add' });
  });

  it('puts a method under its class, nested classes in order', () => {
    expect(treePlace('tests/test_x.py::TestOuter::TestInner::test_m')).toEqual({
      file: 'tests/test_x.py',
      parents: [
        ['tests/test_x.py::TestOuter', 'TestOuter'],
        ['tests/test_x.py::TestOuter::TestInner', 'TestInner'],
      ],
      label: 'test_m',
    });
  });

  it('groups parameter sets under their function, brackets and spaces kept', () => {
    expect(treePlace('tests/t.py::TestK::test_p[a b-1]')).toEqual({
      file: 'tests/t.py',
      parents: [
        ['tests/t.py::TestK', 'TestK'],
        ['tests/t.py::TestK::test_p', 'test_p'],
      ],
      label: '[a b-1]',
    });
    // `::` inside the parameters stays in the label's id part (pytest escapes it rarely, but a label may have it)
    expect(treePlace('t.py::test_q[x]').parents).toEqual([['t.py::test_q', 'test_q']]);
  });

  it('reads node:test ids (suites joined by " > ") without a file', () => {
    expect(treePlace('math > adds')).toEqual({ file: undefined, parents: [['math', 'math']], label: 'adds' });
  });
});

describe('daemonTestId: another controller\'s item -> the id greenloop runs', () => {
  const item = (id: string, extra: Partial<TestItemLike> = {}): TestItemLike => ({ id, label: id.split('::').pop() ?? id, ...extra });

  it('takes the Python extension\'s absolute pytest ids relative to the folder', () => {
    expect(daemonTestId(item('/home/u/proj/tests/test_x.py::test_add'), folder)).toEqual({ ok: true, testId: 'tests/test_x.py::test_add' });
  });

  it('keeps classes and parameters', () => {
    expect(daemonTestId(item('/home/u/proj/tests/test_x.py::TestK::test_p[1-2]'), folder)).toEqual({
      ok: true,
      testId: 'tests/test_x.py::TestK::test_p[1-2]',
    });
  });

  it('takes relative pytest ids as they are', () => {
    expect(daemonTestId(item('./tests/test_x.py::test_add'), folder)).toEqual({ ok: true, testId: 'tests/test_x.py::test_add' });
  });

  it('maps unittest dotted ids to pytest ids through the item\'s file', () => {
    const unittest = item('tests.test_x.TestK.test_m', { label: 'test_m', uri: file('/home/u/proj/tests/test_x.py') });
    expect(daemonTestId(unittest, folder)).toEqual({ ok: true, testId: 'tests/test_x.py::TestK::test_m' });
  });

  it('handles Windows paths', () => {
    const windows = item('C:\\work\\proj\\tests\\test_x.py::test_add');
    expect(daemonTestId(windows, 'c:\\work\\proj')).toEqual({ ok: true, testId: 'tests/test_x.py::test_add' });
  });

  it('says clearly why a test cannot be run', () => {
    const outside = daemonTestId(item('/elsewhere/tests/test_x.py::test_add'), folder);
    expect(outside).toEqual({ ok: false, reason: expect.stringContaining(`${NOT_RUNNABLE}: "test_add" is in /elsewhere/tests/test_x.py, outside the folder`) });
    const jest = daemonTestId(item('src/sum.test.js#sum adds', { label: 'sum adds', uri: file('/home/u/proj/src/sum.test.js') }), folder);
    expect(jest).toEqual({ ok: false, reason: expect.stringMatching(/^this test is not one greenloop can run: "sum adds" has the id/) });
    const suite = daemonTestId(item('/home/u/proj/tests', { label: 'tests', children: { size: 3 } }), folder);
    expect(suite).toEqual({ ok: false, reason: expect.stringContaining('is a folder, file or suite, not one test') });
    expect(daemonTestId(item('/home/u/proj/t.py::test_a'), undefined)).toEqual({
      ok: false,
      reason: `${NOT_RUNNABLE}: "test_a" is not in a workspace folder greenloop serves`,
    });
  });

  it('relativeTo does not take a sibling folder with the same prefix for the folder', () => {
    expect(relativeTo('/home/u/proj', '/home/u/proj2/t.py')).toBeUndefined();
    expect(relativeTo('/home/u/proj/', '/home/u/proj/a/t.py')).toBe('a/t.py');
  });
});

describe('the Fix with Greenloop command\'s argument and progress', () => {
  it('takes the item from the item menus and from the message menu\'s {test, message}', () => {
    const test = { id: 'x|t.py::test_a', label: 'test_a' };
    expect(itemOfArgument(test)).toBe(test);
    expect(itemOfArgument({ test, message: { message: 'boom' } })).toBe(test);
    expect(itemOfArgument(undefined)).toBeUndefined();
    expect(itemOfArgument({ message: 'no test' })).toBeUndefined();
  });

  it('writes each loop event as one terminal line', () => {
    const event = { runId: 'r', kind: 'candidate_tested', text: 'candidate 1/4: 2 of 2 pass\nbest so far', event: {} };
    expect(progressLine(event as never)).toBe('[candidate_tested] candidate 1/4: 2 of 2 pass\r\nbest so far\r\n');
  });
});
