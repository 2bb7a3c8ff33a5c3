// The LSP surface between the extension and `greenloop serve`: method names,
// command ids and the typed params/results of docs/design.md's contract.

export interface Position {
  line: number;
  character: number;
}

export interface Range {
  start: Position;
  end: Position;
}

/** Server-side `workspace/executeCommand` ids (arguments are one JSON object in a list). */
export const ServerCommand = {
  runTests: 'greenloop.runTests',
  fixFailingTests: 'greenloop.fixFailingTests',
  improve: 'greenloop.improve',
  generateProject: 'greenloop.generateProject',
  cancel: 'greenloop.cancel',
} as const;

export type Template = 'python' | 'node' | 'rust';
export const TEMPLATES: readonly Template[] = ['python', 'node', 'rust'];

export interface RunTestsResult {
  passed: number;
  failed: number;
  errors: number;
  skipped: number;
}

export interface FixArgs {
  testIds?: string[];
}

export interface ImproveArgs {
  uri: string;
  range: Range;
  instruction: string;
}

export interface LoopResult {
  runId: string;
  outcome: string;
  summary: string;
  applied: boolean;
}

export interface GenerateArgs {
  prompt: string;
  template: Template;
  outDir: string;
  smallSteps?: boolean;
}

export interface GenerateResult {
  runId: string;
  outcome: string;
  summary: string;
  outDir: string;
  files: string[];
}

export interface CancelResult {
  cancelled: number;
}

/** `greenloop/loopEvent` (server -> client notification). */
export const LOOP_EVENT = 'greenloop/loopEvent';

export interface LoopEventParams {
  runId: string;
  kind: string;
  text: string;
  iteration: number | null;
  maxIterations: number | null;
  passed: number | null;
  failed: number | null;
  promptTokens: number | null;
  completionTokens: number | null;
  cost: number | null;
  outcome: string | null;
  event?: Record<string, unknown>;
}

/** `greenloop/feedback` (client -> server request). */
export const FEEDBACK = 'greenloop/feedback';

export interface FeedbackParams {
  uri: string;
  range: Range;
  text: string;
  threadId: string;
}

export type FeedbackStatus = 'applied' | 'declined' | 'no_change' | 'failed' | 'cancelled';

export interface FeedbackResult {
  threadId: string;
  status: FeedbackStatus;
  message: string;
  edit: unknown;
}

/** `greenloop/runs` (client -> server request). */
export const RUNS = 'greenloop/runs';

export interface RunSummary {
  id: string;
  mode: string;
  outcome: string;
  startedAt: string;
  iterations: number;
  cost: number;
}

/** The environment variable the API key travels in (never settings.json, never logged). */
export const API_KEY_ENV = 'GREENLOOP_LLM__API_KEY';
