// The loop's state as the status bar shows it, folded from `greenloop/loopEvent`s.

import type { LoopEventParams } from './protocol';

export type ServerState = 'starting' | 'running' | 'stopped' | 'notFound' | 'failed' | 'untrusted';

export interface LoopState {
  server: ServerState;
  runId?: string;
  running: boolean;
  iteration?: number;
  maxIterations?: number;
  passed?: number;
  failed?: number;
  promptTokens: number;
  completionTokens: number;
  cost: number;
  outcome?: string;
  lastText?: string;
  /** The candidate the round is on, e.g. "2/4", and the best tested so far, e.g. "5/6 passing". */
  candidate?: string;
  best?: string;
}

export const INITIAL_STATE: LoopState = {
  server: 'starting',
  running: false,
  promptTokens: 0,
  completionTokens: 0,
  cost: 0,
};

/** The next state after one loop event (a new runId starts a fresh run). */
export function reduceLoopState(state: LoopState, event: LoopEventParams): LoopState {
  const fresh = event.kind === 'run_started' || event.runId !== state.runId;
  const base: LoopState = fresh
    ? { server: state.server, running: true, runId: event.runId, promptTokens: 0, completionTokens: 0, cost: 0 }
    : { ...state };
  base.lastText = event.text || base.lastText;
  if (event.iteration != null) base.iteration = event.iteration;
  if (event.maxIterations != null) base.maxIterations = event.maxIterations;
  if (event.passed != null) base.passed = event.passed;
  if (event.failed != null) base.failed = event.failed;
  if (event.promptTokens != null) base.promptTokens = event.promptTokens;
  if (event.completionTokens != null) base.completionTokens = event.completionTokens;
  if (event.cost != null) base.cost = event.cost;
  const fields = event.event;
  if (event.kind === 'iteration_started') {
    base.candidate = undefined;
    base.best = undefined;
  } else if (event.kind === 'candidate_asked') {
    base.candidate = `${String(fields.index)}/${String(fields.of)}`;
  } else if (event.kind === 'candidate_tested' && fields.status === 'tested') {
    const passed = Number(fields.passed ?? 0);
    const total = passed + Number(fields.failed ?? 0) + Number(fields.errors ?? 0);
    const shown = `${passed}/${total} passing`;
    if (base.best == null || passed > Number(base.best.split('/')[0])) base.best = shown;
  }
  if (event.kind === 'done') {
    base.candidate = undefined;
    base.running = false;
    base.outcome = event.outcome ?? 'done';
  }
  return base;
}

export function formatTokens(count: number): string {
  if (count < 1000) return `${count}`;
  if (count < 1_000_000) return `${(count / 1000).toFixed(1)}k`;
  return `${(count / 1_000_000).toFixed(1)}M`;
}

export function formatCost(cost: number): string {
  return cost < 0.01 && cost > 0 ? `$${cost.toFixed(4)}` : `$${cost.toFixed(2)}`;
}

const SERVER_TEXT: Record<Exclude<ServerState, 'running'>, [string, string]> = {
  starting: ['$(loading~spin) Greenloop', 'Greenloop: starting the language server'],
  stopped: ['$(debug-stop) Greenloop', 'Greenloop: the language server is stopped (Greenloop: Restart Server)'],
  notFound: ['$(warning) Greenloop', 'Greenloop: server not found; see the Greenloop output'],
  failed: ['$(error) Greenloop', 'Greenloop: the language server failed; see the Greenloop output'],
  untrusted: ['$(shield) Greenloop', 'Greenloop: off in Restricted Mode; trust the workspace to use it'],
};

const OUTCOME_ICON: Record<string, string> = { green: '$(pass)', already_green: '$(pass)', cancelled: '$(circle-slash)' };

function details(state: LoopState): string[] {
  const parts: string[] = [];
  if (state.passed != null || state.failed != null) {
    parts.push(`${state.passed ?? 0} passed, ${state.failed ?? 0} failed`);
  }
  const tokens = state.promptTokens + state.completionTokens;
  if (tokens > 0) parts.push(`${formatTokens(tokens)} tok`);
  if (state.cost > 0) parts.push(formatCost(state.cost));
  return parts;
}

/** Status bar text and tooltip for a state. */
export function formatLoopStatus(state: LoopState): { text: string; tooltip: string } {
  if (state.server !== 'running') {
    const [text, tooltip] = SERVER_TEXT[state.server];
    return { text, tooltip };
  }
  if (!state.runId) return { text: '$(beaker) Greenloop', tooltip: 'Greenloop: ready' };
  const parts = details(state);
  if (state.running) {
    const iteration = state.iteration != null ? ` ${state.iteration}/${state.maxIterations ?? '?'}` : '';
    const round = state.candidate ? [`candidate ${state.candidate}${state.best ? `, best ${state.best}` : ''}`] : [];
    const text = [`$(sync~spin) Greenloop${iteration}`, ...round, ...parts].join(' · ');
    return { text, tooltip: `Greenloop is running (click for the log)\n${state.lastText ?? ''}`.trim() };
  }
  const icon = OUTCOME_ICON[state.outcome ?? ''] ?? '$(error)';
  const text = [`${icon} Greenloop: ${state.outcome}`, ...parts].join(' · ');
  return { text, tooltip: `Greenloop: last run ${state.outcome}\n${state.lastText ?? ''}`.trim() };
}
