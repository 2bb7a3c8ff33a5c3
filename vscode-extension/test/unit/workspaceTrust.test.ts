import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { MANAGE_TRUST, TrustGuard, UNTRUSTED_MESSAGE } from '../../src/workspaceTrust';

function guard(trusted: boolean, pick?: string) {
  const deps = {
    isTrusted: () => trusted,
    show: vi.fn(async (..._args: string[]) => pick),
    manageTrust: vi.fn(),
  };
  return { deps, guard: new TrustGuard(deps) };
}

describe('TrustGuard', () => {
  it('in an untrusted workspace a run does not start; the message says why, with the way out', async () => {
    const { deps, guard: g } = guard(false, MANAGE_TRUST);
    const run = vi.fn(async () => undefined);
    await g.guard(run)();
    expect(run).not.toHaveBeenCalled();
    expect(deps.show).toHaveBeenCalledWith(UNTRUSTED_MESSAGE, MANAGE_TRUST);
    await vi.waitFor(() => expect(deps.manageTrust).toHaveBeenCalled());
    expect(UNTRUSTED_MESSAGE).toMatch(/Restricted Mode/);
  });

  it('in a trusted workspace the run goes ahead, silently', async () => {
    const { deps, guard: g } = guard(true);
    const run = vi.fn(async (_a: number) => undefined);
    await g.guard(run)(7);
    expect(run).toHaveBeenCalledWith(7);
    expect(deps.show).not.toHaveBeenCalled();
  });

  it('package.json: limited support in untrusted workspaces, with the executable settings restricted', () => {
    const pkg = JSON.parse(readFileSync(join(__dirname, '../../package.json'), 'utf8'));
    const untrusted = pkg.capabilities.untrustedWorkspaces;
    expect(untrusted.supported).toBe('limited');
    expect(untrusted.description).toMatch(/Restricted Mode/);
    expect(untrusted.restrictedConfigurations).toEqual(
      expect.arrayContaining(['greenloop.server.path', 'greenloop.localModel.serverPath', 'greenloop.llm.baseUrl']),
    );
  });
});
