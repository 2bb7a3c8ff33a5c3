// Turns command results and arguments into what the user reads (pure; unit-tested).

import type { FixArgs, GenerateResult, LoopResult, RunTestsResult } from './protocol';

export type Level = 'info' | 'warning' | 'error';

export interface UserMessage {
  level: Level;
  text: string;
}

const OUTCOME_LEVEL: Record<string, Level> = {
  green: 'info',
  already_green: 'info',
  cancelled: 'warning',
  no_tests: 'warning',
  stuck: 'warning',
  budget: 'warning',
  error: 'error',
  environment: 'error', // the tests cannot run in the sandbox: the message says the cause and the fix
};

function levelOf(outcome: string): Level {
  return OUTCOME_LEVEL[outcome] ?? 'warning';
}

/** Arguments of "Fix Failing Tests": a code action's `{testIds}`, or `{}` from the palette. */
export function fixArgs(arg: unknown): FixArgs {
  if (typeof arg !== 'object' || arg === null || !('testIds' in arg)) return {};
  const ids = (arg as { testIds: unknown }).testIds;
  if (!Array.isArray(ids)) return {};
  const testIds = ids.filter((id): id is string => typeof id === 'string');
  return testIds.length ? { testIds } : {};
}

export function describeTests(result: RunTestsResult): UserMessage {
  const parts = [`${result.passed} passed`, `${result.failed} failed`];
  if (result.errors) parts.push(`${result.errors} errors`);
  if (result.skipped) parts.push(`${result.skipped} skipped`);
  const bad = result.failed + result.errors > 0;
  return { level: bad ? 'warning' : 'info', text: `Greenloop tests: ${parts.join(', ')}.` };
}

export function describeLoop(result: LoopResult): UserMessage {
  const summary = result.summary.trim();
  const change = result.applied ? ' The change was applied.' : '';
  return { level: levelOf(result.outcome), text: `Greenloop (${result.outcome}): ${summary}${change}`.trim() };
}

export function describeGenerate(result: GenerateResult): UserMessage {
  const files = result.files.length === 1 ? '1 file' : `${result.files.length} files`;
  return {
    level: levelOf(result.outcome),
    text: `Greenloop generated ${files} in ${result.outDir} (${result.outcome}): ${result.summary.trim()}`,
  };
}

export function describeCancel(cancelled: number): UserMessage {
  return cancelled > 0
    ? { level: 'info', text: `Greenloop: cancelled ${cancelled} run${cancelled === 1 ? '' : 's'}.` }
    : { level: 'info', text: 'Greenloop: nothing is running.' };
}
