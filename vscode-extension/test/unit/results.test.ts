import { describe, expect, it } from 'vitest';
import { describeCancel, describeGenerate, describeLoop, describeTests, fixArgs } from '../../src/results';

describe('fixArgs', () => {
  it('keeps a code action\'s test ids and ignores anything else', () => {
    expect(fixArgs({ testIds: ['tests/test_calc.py::test_add'] })).toEqual({ testIds: ['tests/test_calc.py::test_add'] });
    expect(fixArgs(undefined)).toEqual({});
    expect(fixArgs({})).toEqual({});
    expect(fixArgs({ testIds: [] })).toEqual({});
    expect(fixArgs({ testIds: 'x' })).toEqual({});
    expect(fixArgs({ testIds: [1, 'a'] })).toEqual({ testIds: ['a'] });
  });
});

describe('messages', () => {
  it('describe test runs, warning when something fails', () => {
    expect(describeTests({ passed: 3, failed: 0, errors: 0, skipped: 0 })).toEqual({
      level: 'info',
      text: 'Greenloop tests: 3 passed, 0 failed.',
    });
    expect(describeTests({ passed: 1, failed: 1, errors: 2, skipped: 1 }).level).toBe('warning');
  });

  it('describe loop outcomes', () => {
    const green = describeLoop({ runId: 'r', outcome: 'green', summary: 'fixed add()', applied: true });
    expect(green).toEqual({ level: 'info', text: 'Greenloop (green): fixed add() The change was applied.' });
    expect(describeLoop({ runId: 'r', outcome: 'error', summary: 'boom', applied: false }).level).toBe('error');
    expect(describeLoop({ runId: 'r', outcome: 'stuck', summary: 'same failure', applied: false }).level).toBe('warning');
    // the tests cannot run in the sandbox: said as an error, with the cause and the fix in the summary
    expect(describeLoop({ runId: 'r', outcome: 'environment', summary: 'removed api', applied: false }).level).toBe('error');
  });

  it('describe generation and cancel', () => {
    const text = describeGenerate({ runId: 'r', outcome: 'green', summary: 'ok', outDir: '/tmp/p', files: ['a', 'b'] }).text;
    expect(text).toBe('Greenloop generated 2 files in /tmp/p (green): ok');
    expect(describeCancel(0).text).toBe('Greenloop: nothing is running.');
    expect(describeCancel(1).text).toBe('Greenloop: cancelled 1 run.');
  });
});
