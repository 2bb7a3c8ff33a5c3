// Restricted Mode: greenloop runs tests and applies a model's edits, so it stays off until the workspace is trusted.

/** The message shown at activation in an untrusted workspace and whenever a run is asked for there. */
export const UNTRUSTED_MESSAGE =
  'Greenloop is off in Restricted Mode: it runs this workspace\'s tests and applies a model\'s changes to its code. ' +
  'Trust the workspace to use it.';
export const MANAGE_TRUST = 'Manage Workspace Trust';

export interface TrustDeps {
  isTrusted(): boolean;
  /** A non-modal warning with buttons (vscode.window.showWarningMessage). */
  show(message: string, ...items: string[]): Thenable<string | undefined>;
  /** Opens VS Code's workspace trust editor (`workbench.trust.manage`). */
  manageTrust(): void;
}

export class TrustGuard {
  constructor(private readonly deps: TrustDeps) {}

  get trusted(): boolean {
    return this.deps.isTrusted();
  }

  /** True in a trusted workspace; otherwise says why nothing runs and returns false. */
  allows(): boolean {
    if (this.deps.isTrusted()) return true;
    void this.deps.show(UNTRUSTED_MESSAGE, MANAGE_TRUST).then((pick) => {
      if (pick === MANAGE_TRUST) this.deps.manageTrust();
    });
    return false;
  }

  /** `run`, but only in a trusted workspace (the message instead, otherwise). */
  guard<A extends unknown[]>(run: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
    return async (...args: A) => {
      if (this.allows()) await run(...args);
    };
  }
}
