import { spawn } from 'node:child_process';

/**
 * Runs a command; resolves to its exit code. Its output is inherited, or, given `output` (an array), held
 * there as it comes so a step run beside another can print it whole when it ends.
 */
export function run(cmd, args, { output, ...opts } = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: output ? ['ignore', 'pipe', 'pipe'] : 'inherit', ...opts });
    if (output) for (const stream of [child.stdout, child.stderr]) stream.on('data', (chunk) => output.push(chunk));
    child.on('error', (err) => {
      const message = `[sagaflow] could not run ${cmd}: ${err.message}\n`;
      if (output) output.push(Buffer.from(message));
      else process.stderr.write(message);
      resolve(1);
    });
    // `close`, not `exit`: held output is complete only once the child's streams have closed.
    child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

/** Logs a step with its duration, and returns whether it passed. */
export async function step(title, fn) {
  const t0 = Date.now();
  console.error(`\n[sagaflow] ▶ ${title}`);
  const code = await fn();
  return ended(title, code, t0);
}

/**
 * A step that may run beside others: `fn` gets an array to hold its output in (see {@link run}), printed
 * under the step's title when it ends.
 */
export async function heldStep(title, fn) {
  const t0 = Date.now();
  const output = [];
  const code = await fn(output);
  console.error(`\n[sagaflow] ▶ ${title}`);
  for (const chunk of output) process.stderr.write(chunk);
  return ended(title, code, t0);
}

function ended(title, code, t0) {
  const secs = ((Date.now() - t0) / 1000).toFixed(1);
  console.error(`[sagaflow] ${code === 0 ? '✔' : '✘'} ${title} (${secs}s)`);
  return { title, ok: code === 0, secs };
}
