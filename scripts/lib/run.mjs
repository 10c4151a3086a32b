import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { setPriority } from 'node:os';

/** Runs a command with inherited output; resolves to its exit code. */
export function run(cmd, args, opts = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: 'inherit', ...opts });
    child.on('error', (err) => {
      console.error(`[sagaflow] could not run ${cmd}: ${err.message}`);
      resolve(1);
    });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

/**
 * Runs a command with its stdout and stderr kept, in the order they came, instead of shown:
 * resolves to its exit code and that output, so commands run side by side do not mix their lines.
 */
export function runCaptured(cmd, args, opts = {}, onStart = () => undefined) {
  return new Promise((resolve) => {
    const chunks = [];
    const child = spawn(cmd, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
    if (child.pid !== undefined) onStart(child.pid);
    child.stdout.on('data', (c) => chunks.push(c));
    child.stderr.on('data', (c) => chunks.push(c));
    child.on('error', (err) => {
      chunks.push(Buffer.from(`[sagaflow] could not run ${cmd}: ${err.message}\n`));
      resolve({ code: 1, output: Buffer.concat(chunks).toString('utf8') });
    });
    child.on('close', (code, signal) =>
      resolve({ code: code ?? (signal ? 1 : 0), output: Buffer.concat(chunks).toString('utf8') }),
    );
  });
}

const secsSince = (t0) => ((Date.now() - t0) / 1000).toFixed(1);

/** Logs a step with its duration, and returns whether it passed. */
export async function step(title, fn) {
  const t0 = Date.now();
  console.error(`\n[sagaflow] ▶ ${title}`);
  const code = await fn();
  const secs = secsSince(t0);
  console.error(`[sagaflow] ${code === 0 ? '✔' : '✘'} ${title} (${secs}s)`);
  return { title, ok: code === 0, secs };
}

/**
 * Several independent steps at once (each `{ title, cmd, args, opts }`), for checks that each keep
 * one core busy: each one's output is shown whole once it ends, in the order they were given, with its
 * own duration. Returns one result per step, as {@link step} does.
 */
export async function stepsTogether(steps) {
  const t0 = Date.now();
  console.error(`\n[sagaflow] ▶ ${steps.map((s) => s.title).join(', ')} (side by side)`);
  const results = [];
  for (const done of stepsHeld(steps)) {
    const r = await done;
    showHeld(r);
    results.push({ title: r.title, ok: r.ok, secs: r.secs });
  }
  console.error(`[sagaflow] side by side: ${secsSince(t0)}s in all`);
  return results;
}

/**
 * Starts every step at once with its output kept, not shown: one promise per step, in the order given,
 * each resolving to `{ title, ok, secs, output }` when that step ends. {@link showHeld} prints one.
 * `onStart` gets each command's pid.
 */
export function stepsHeld(steps, onStart = () => undefined) {
  return steps.map(async (s) => {
    const started = Date.now();
    const { code, output } = await runCaptured(s.cmd, s.args, s.opts, onStart);
    return { title: s.title, ok: code === 0, secs: secsSince(started), output };
  });
}

/** Shows a held step's output whole, framed as {@link step} frames a step's. */
export function showHeld(r) {
  console.error(`\n[sagaflow] ▶ ${r.title}`);
  if (r.output !== '') process.stderr.write(r.output.endsWith('\n') ? r.output : `${r.output}\n`);
  console.error(`[sagaflow] ${r.ok ? '✔' : '✘'} ${r.title} (${r.secs}s)`);
}

/**
 * `cmd args` at a lower CPU priority (`nice -n level`), inherited by everything it starts: it takes
 * the cores the processes at normal priority leave idle, and yields them when those want them back.
 */
export function niced(cmd, args, level = 10) {
  if (!existsSync('/usr/bin/nice')) return { cmd, args };
  return { cmd: '/usr/bin/nice', args: ['-n', String(level), cmd, ...args] };
}

/**
 * Puts `pids` and every process they started back at normal priority (nice 0), once what they were
 * yielding to has ended: best effort, since only root may raise a priority (elsewhere they stay niced).
 */
export function restorePriority(pids) {
  const children = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The fields after the command's name (which may hold spaces) in parentheses: state, then ppid.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // The process ended while we read.
    }
  }
  const queue = [...pids];
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    try {
      setPriority(pid, 0);
    } catch {
      // Gone, or not ours to raise.
    }
    queue.push(...(children.get(pid) ?? []));
  }
}
