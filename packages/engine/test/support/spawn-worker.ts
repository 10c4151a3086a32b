import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));

/**
 * Starts a child worker process (`script`, run through tsx with the database URL as its argument) and
 * resolves with it and its worker id once it prints `ready <worker id>`: a real process a test can
 * SIGKILL. `onSpawn` gets the process at once, so the caller can kill it even if it never gets ready.
 */
export function spawnWorker(
  script: string,
  url: string,
  onSpawn: (proc: ChildProcess) => void = () => undefined,
): Promise<{ proc: ChildProcess; workerId: string }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', script, url], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    onSpawn(proc);
    let out = '';
    proc.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /^ready (\S+)\n/m.exec(out);
      if (m?.[1]) resolve({ proc, workerId: m[1] });
    });
    proc.once('exit', (code, signal) =>
      reject(new Error(`the child worker exited before it was ready (code ${code}, signal ${signal})`)),
    );
  });
}
