import { describe, expect, it } from 'vitest';
import { formatCost, formatLoopStatus, formatTokens, INITIAL_STATE, reduceLoopState, type LoopState } from '../../src/loopStatus';
import type { LoopEventParams } from '../../src/protocol';

function event(kind: string, fields: Partial<LoopEventParams> = {}): LoopEventParams {
  return {
    runId: 'r1', kind, text: `${kind} text`, iteration: null, maxIterations: null, passed: null, failed: null,
    promptTokens: null, completionTokens: null, cost: null, outcome: null, event: {}, ...fields,
  };
}

const running: LoopState = { ...INITIAL_STATE, server: 'running' };

describe('loop status', () => {
  it('shows iteration, tests, tokens and cost while a loop runs', () => {
    let state = reduceLoopState(running, event('run_started'));
    state = reduceLoopState(state, event('iteration_started', { iteration: 2, maxIterations: 5 }));
    state = reduceLoopState(state, event('tests_ran', { passed: 4, failed: 3 }));
    state = reduceLoopState(state, event('budget', { promptTokens: 1200, completionTokens: 300, cost: 0.0123 }));
    const { text, tooltip } = formatLoopStatus(state);
    expect(text).toBe('$(sync~spin) Greenloop 2/5 · 4 passed, 3 failed · 1.5k tok · $0.01');
    expect(tooltip).toContain('budget text');
  });

  it('shows the outcome when the run is done, and starts fresh on the next run', () => {
    let state = reduceLoopState(running, event('tests_ran', { passed: 1, failed: 1 }));
    state = reduceLoopState(state, event('done', { outcome: 'green', passed: 2, failed: 0 }));
    expect(formatLoopStatus(state).text).toBe('$(pass) Greenloop: green · 2 passed, 0 failed');
    state = reduceLoopState(state, event('done', { runId: 'r2', outcome: 'stuck' }));
    expect(state.passed).toBeUndefined();
    expect(formatLoopStatus(state).text).toBe('$(error) Greenloop: stuck');
  });

  it('shows the round: the candidate asked and the best tested so far, apart from the state\'s tests', () => {
    let state = reduceLoopState(running, event('iteration_started', { iteration: 1, maxIterations: 5 }));
    state = reduceLoopState(state, event('tests_ran', { passed: 4, failed: 2 }));
    const asked = (index: number) => event('candidate_asked', { event: { index, of: 4 } });
    const tested = (passed: number, failed: number) =>
      event('candidate_tested', { event: { status: 'tested', passed, failed, errors: 0 } });
    state = reduceLoopState(state, asked(1));
    state = reduceLoopState(state, tested(1, 1));
    state = reduceLoopState(state, asked(2));
    state = reduceLoopState(state, event('candidate_tested', { event: { status: 'rejected', passed: 0 } }));
    state = reduceLoopState(state, asked(3));
    expect(formatLoopStatus(state).text).toBe('$(sync~spin) Greenloop 1/5 · candidate 3/4, best 1/2 passing · 4 passed, 2 failed');
    state = reduceLoopState(state, event('iteration_started', { iteration: 2, maxIterations: 5 }));
    expect(formatLoopStatus(state).text).toBe('$(sync~spin) Greenloop 2/5 · 4 passed, 2 failed');
  });

  it('shows the server state before any run', () => {
    expect(formatLoopStatus(INITIAL_STATE).text).toContain('loading');
    expect(formatLoopStatus({ ...INITIAL_STATE, server: 'notFound' }).tooltip).toContain('server not found');
    expect(formatLoopStatus(running).text).toBe('$(beaker) Greenloop');
  });

  it('formats tokens and cost compactly', () => {
    expect([formatTokens(999), formatTokens(12_345), formatTokens(2_500_000)]).toEqual(['999', '12.3k', '2.5M']);
    expect([formatCost(0), formatCost(0.0042), formatCost(1.5)]).toEqual(['$0.00', '$0.0042', '$1.50']);
  });
});
