import { describe, expect, it } from 'vitest';
import { run } from './run.mjs';

describe('run: a step of npm test, its output held while it runs beside another', () => {
  it("holds all of a command's stdout and stderr and gives its exit code", async () => {
    const output = [];
    // 2,000 lines on each stream, the last after a pause: all of it is held when the run resolves.
    const script = 'for i in $(seq 2000); do echo "out $i"; echo "err $i" >&2; done; sleep 0.2; echo last; exit 3';
    const code = await run('sh', ['-c', script], { output });
    expect(code).toBe(3);
    const text = Buffer.concat(output.map((c) => Buffer.from(c))).toString();
    expect(text.match(/^out \d+$/gm)).toHaveLength(2000);
    expect(text.match(/^err \d+$/gm)).toHaveLength(2000);
    expect(text.trimEnd().endsWith('last')).toBe(true);
  });

  it('says which command could not start, in the held output, and fails', async () => {
    const output = [];
    expect(await run('/no/such/command', [], { output })).toBe(1);
    expect(Buffer.concat(output).toString()).toContain('could not run /no/such/command');
  });
});
