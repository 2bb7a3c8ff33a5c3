import { describe, expect, it } from 'vitest';
import {
  isPythonName,
  locateServer,
  probeCommand,
  ServerNotFoundError,
  whichAll,
  type LocatorDeps,
} from '../../src/serverLocator';

/** A fake machine: the executable files that exist and the commands that succeed. */
function machine(files: string[], working: string[], over: Partial<LocatorDeps> = {}): LocatorDeps & { probes: string[] } {
  const probes: string[] = [];
  return {
    settingPath: '',
    activePython: async () => undefined,
    env: { PATH: '/venv/bin:/usr/local/bin:/usr/bin' },
    platform: 'linux',
    isExecutable: async (file) => files.includes(file),
    probe: async (command, args) => {
      probes.push(`${command} ${args.join(' ')}`);
      return working.includes(command);
    },
    probes,
    ...over,
  };
}

describe('locateServer', () => {
  it('uses greenloop.server.path as the executable when it is not a Python', async () => {
    const deps = machine(['/opt/gl/greenloop'], [], { settingPath: '/opt/gl/greenloop' });
    expect(await locateServer(deps)).toMatchObject({ command: '/opt/gl/greenloop', args: ['serve'] });
  });

  it('runs `python -m greenloop serve` when the setting names a Python with greenloop', async () => {
    const deps = machine(['/venv/bin/python3.12'], ['/venv/bin/python3.12'], { settingPath: '/venv/bin/python3.12' });
    expect(await locateServer(deps)).toMatchObject({ command: '/venv/bin/python3.12', args: ['-m', 'greenloop', 'serve'] });
  });

  it('reports a setting that points nowhere instead of searching elsewhere', async () => {
    const deps = machine(['/usr/bin/greenloop'], ['/usr/bin/greenloop'], { settingPath: '/nope/greenloop' });
    await expect(locateServer(deps)).rejects.toThrow(/greenloop.server.path is "\/nope\/greenloop"/);
  });

  it('says how to install greenloop into the Python named by the setting', async () => {
    const deps = machine(['/usr/bin/python3'], [], { settingPath: '/usr/bin/python3' });
    await expect(locateServer(deps)).rejects.toThrow('"/usr/bin/python3" -m pip install greenloop');
  });

  it('prefers the active Python environment when greenloop imports there', async () => {
    const deps = machine(['/usr/bin/greenloop'], ['/env/bin/python', '/usr/bin/greenloop'], {
      activePython: async () => '/env/bin/python',
    });
    expect(await locateServer(deps)).toMatchObject({ command: '/env/bin/python', source: 'active Python environment' });
  });

  it('falls back to greenloop on PATH, then to a python3 on PATH that can import it', async () => {
    const onPath = machine(['/usr/local/bin/greenloop', '/usr/bin/python3'], ['/usr/local/bin/greenloop']);
    expect(await locateServer(onPath)).toMatchObject({ command: '/usr/local/bin/greenloop', args: ['serve'] });

    const viaPython = machine(['/venv/bin/python3', '/usr/bin/python3'], ['/usr/bin/python3']);
    expect(await locateServer(viaPython)).toMatchObject({ command: '/usr/bin/python3', args: ['-m', 'greenloop', 'serve'] });
    expect(viaPython.probes).toEqual(['/venv/bin/python3 -c import greenloop', '/usr/bin/python3 -c import greenloop']);
  });

  it('says what to install and what it tried when nothing works', async () => {
    const deps = machine(['/usr/bin/python3'], [], { activePython: async () => '/env/bin/python' });
    const error = await locateServer(deps).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerNotFoundError);
    expect((error as Error).message).toContain('python3 -m pip install greenloop');
    expect((error as ServerNotFoundError).tried).toEqual(['/env/bin/python (active Python environment)', '/usr/bin/python3']);
  });

  it('says no Python was found on an empty PATH', async () => {
    const deps = machine([], [], { env: { PATH: '' } });
    await expect(locateServer(deps)).rejects.toThrow('No Python was found on PATH');
  });
});

describe('helpers', () => {
  it('recognises Python interpreter names', () => {
    expect(['python', 'python3', 'python3.12', 'C:\\Py\\python.exe'].map(isPythonName)).toEqual([true, true, true, true]);
    expect(['greenloop', 'pythonista', '/usr/bin/py'].map(isPythonName)).toEqual([false, false, false]);
  });

  it('finds executables in PATH order without duplicates', async () => {
    const deps = machine(['/a/x', '/b/x'], [], { env: { PATH: '/a:/b:/a' } });
    expect(await whichAll('x', deps)).toEqual(['/a/x', '/b/x']);
  });

  it('probes real processes by exit code', async () => {
    expect(await probeCommand('python3', ['-c', 'import greenloop'])).toBe(true);
    expect(await probeCommand('python3', ['-c', 'import greenloop_not_a_module'])).toBe(false);
    expect(await probeCommand('/nonexistent/greenloop', ['--version'])).toBe(false);
  });
});
