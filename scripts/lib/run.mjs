import { spawn } from 'node:child_process';

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

/** Logs a step with its duration, and returns whether it passed. */
export async function step(title, fn) {
  const t0 = Date.now();
  console.error(`\n[sagaflow] ▶ ${title}`);
  const code = await fn();
  const secs = ((Date.now() - t0) / 1000).toFixed(1);
  console.error(`[sagaflow] ${code === 0 ? '✔' : '✘'} ${title} (${secs}s)`);
  return { title, ok: code === 0, secs };
}
