import { describe, expect, it } from 'vitest';
import { buildProgram, commandNamed, COMMANDS } from '../../../../src/app/cli/command-table.js';

describe('command table', () => {
  it('lists each command with the description its module registers', async () => {
    const program = await buildProgram();
    const registered = Object.fromEntries(program.commands.map((c) => [c.name(), c.description()]));
    const listed = Object.fromEntries(Object.entries(COMMANDS).map(([n, e]) => [n, e.description]));
    expect(registered).toEqual(listed);
  });

  it('loads only the named command and lists the others by name and description', async () => {
    const program = await buildProgram(['status', '--help']);
    const status = program.commands.find((c) => c.name() === 'status');
    expect(status?.options.map((o) => o.long)).toContain('--json');
    const worker = program.commands.find((c) => c.name() === 'worker');
    expect(worker?.description()).toBe(COMMANDS.worker?.description);
    expect(worker?.options).toEqual([]);
  });

  it('finds the command in argv, including `help <cmd>`', () => {
    expect(commandNamed(['--help'])).toBeUndefined();
    expect(commandNamed(['status', '--json'])).toBe('status');
    expect(commandNamed(['help', 'tail'])).toBe('tail');
    expect(commandNamed(['nope'])).toBeUndefined();
    expect(commandNamed(['constructor'])).toBeUndefined();
  });
});
