import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { niced, restorePriority, runCaptured } from './run.mjs';

const made = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * A step's command: says it began, writes its own mark, then waits for the mark of `other` (so it can
 * only finish if the other step runs at the same time; it gives up after 60 s with exit code 3), and
 * prints three lines apart from each other in time, so interleaved output would show.
 */
const waiter = (dir, own, other, exitCode = 0) => [
  '-e',
  `const fs = require('node:fs'), path = require('node:path');
   const dir = ${JSON.stringify(dir)};
   console.log('${own} began');
   fs.writeFileSync(path.join(dir, '${own}'), '');
   const until = Date.now() + 60000;
   const wait = () => {
     if (fs.existsSync(path.join(dir, '${other}'))) {
       let n = 0;
       const line = () => { console.error('${own} line ' + ++n); if (n < 3) setTimeout(line, 20); else process.exit(${exitCode}); };
       return line();
     }
     if (Date.now() > until) { console.log('${own} never saw ${other}'); process.exit(3); }
     setTimeout(wait, 10);
   };
   wait();`,
];

/** Runs stepsTogether in a node process of its own, as `npm test` does; its stderr and its results. */
function together(steps) {
  const runModule = pathToFileURL(join(import.meta.dirname, 'run.mjs')).href;
  const script = `import { stepsTogether } from ${JSON.stringify(runModule)};
    const results = await stepsTogether(${JSON.stringify(steps)});
    process.stdout.write(JSON.stringify(results));`;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { stderr: child.stderr, results: JSON.parse(child.stdout) };
}

describe('npm test runs its static checks side by side (stepsTogether)', () => {
  it('runs the steps at the same time and shows each one’s output whole, in the order given', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sagaflow-together-'));
    made.push(dir);
    const { stderr, results } = together([
      { title: 'first', cmd: process.execPath, args: waiter(dir, 'a', 'b') },
      { title: 'second', cmd: process.execPath, args: waiter(dir, 'b', 'a') },
    ]);
    // Each waited for the other's mark: run one after the other, the first would have given up.
    expect(results.map((r) => [r.title, r.ok])).toEqual([
      ['first', true],
      ['second', true],
    ]);
    const lines = stderr.split('\n').filter((l) => /^(a|b) /.test(l));
    expect(lines).toEqual([
      'a began',
      'a line 1',
      'a line 2',
      'a line 3',
      'b began',
      'b line 1',
      'b line 2',
      'b line 3',
    ]);
    expect(stderr).toMatch(/✔ first \(\d+\.\ds\)[\s\S]*✔ second \(\d+\.\ds\)/);
  });

  it('reports a failed step as failed, with its output, and still runs the others to their end', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sagaflow-together-'));
    made.push(dir);
    const { stderr, results } = together([
      { title: 'breaks', cmd: process.execPath, args: waiter(dir, 'a', 'b', 2) },
      { title: 'holds', cmd: process.execPath, args: waiter(dir, 'b', 'a') },
      { title: 'missing', cmd: join(dir, 'no-such-command'), args: [] },
    ]);
    expect(results.map((r) => [r.title, r.ok])).toEqual([
      ['breaks', false],
      ['holds', true],
      ['missing', false],
    ]);
    expect(stderr).toContain('a line 3');
    expect(stderr).toContain('b line 3');
    expect(stderr).toMatch(/✘ breaks/);
    expect(stderr).toMatch(/could not run .*no-such-command/);
  });
});

describe('npm test runs its checks and the build beside vitest at a lower priority (niced, ADR 0096)', () => {
  it('starts the command, and what it starts, ten nice levels below this process', async () => {
    const probe = niced(process.execPath, [
      '-e',
      `const os = require('node:os'), { execFileSync } = require('node:child_process');
       const child = execFileSync(process.execPath, ['-e', 'console.log(require("node:os").getPriority())']);
       console.log(os.getPriority(), child.toString().trim());`,
    ]);
    const { code, output } = await runCaptured(probe.cmd, probe.args);
    const expected = Math.min(19, getPriority() + 10);
    expect({ code, output: output.trim() }).toEqual({ code: 0, output: `${expected} ${expected}` });
  });

  it('puts a niced command and what it started back at normal priority once vitest has ended (as root)', async () => {
    const probe = niced(process.execPath, [
      '-e',
      `const c = require('node:child_process').spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
       console.log(c.pid);
       process.on('SIGTERM', () => { c.kill(); process.exit(0); });
       setTimeout(() => {}, 60000);`,
    ]);
    const child = spawn(probe.cmd, probe.args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let grandchild = 0;
    try {
      const [line] = await once(child.stdout, 'data');
      grandchild = Number(String(line).trim());
      expect([getPriority(child.pid), getPriority(grandchild)]).toEqual([
        Math.min(19, getPriority() + 10),
        Math.min(19, getPriority() + 10),
      ]);
      restorePriority([child.pid]);
      // Only root may raise a priority; anyone else's commands stay niced to their end.
      const expected = process.getuid?.() === 0 ? 0 : Math.min(19, getPriority() + 10);
      expect([getPriority(child.pid), getPriority(grandchild)]).toEqual([expected, expected]);
    } finally {
      child.kill('SIGTERM');
      await once(child, 'exit');
      // Its SIGTERM handler ends the grandchild too; this makes sure, however the test ended.
      if (grandchild > 0) {
        try {
          process.kill(grandchild, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
    }
  });
});
