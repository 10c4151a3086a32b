import { runCli } from './cli/run-cli.ts';

// The operator's command line: `npm run sagaflow -- <command>` (see cli/usage.ts for the commands).
// This and env.ts are where the environment is read: runCli parses the settings it needs.

function readStdin(): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (chunk: string) => (text += chunk));
    process.stdin.on('end', () => resolve(text));
    process.stdin.on('error', reject);
  });
}

/** Reads one line from the terminal with echo off; null when stdin is not a terminal. */
function promptSecret(prompt: string): Promise<string | null> {
  const stdin = process.stdin;
  if (!stdin.isTTY) return Promise.resolve(null);
  process.stderr.write(prompt);
  return new Promise((resolve) => {
    let text = '';
    stdin.setRawMode(true);
    stdin.setEncoding('utf8');
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') {
          stdin.setRawMode(false);
          stdin.off('data', onData);
          stdin.pause();
          process.stderr.write('\n');
          resolve(text);
          return;
        }
        if (ch === '\u0003') {
          stdin.setRawMode(false);
          process.stderr.write('\n');
          process.exit(130);
        }
        if (ch === '\u007f' || ch === '\b') text = text.slice(0, -1);
        else text += ch;
      }
    };
    stdin.on('data', onData);
    stdin.resume();
  });
}

/**
 * A reader that goes away (`sagaflow runs list | head -1`, quitting `less`) ends the output quietly: the
 * EPIPE is not an error of the command, so no stack trace, and the lines left are dropped. The command
 * still finishes and exits with its own status (0 for a read), as if its output had all been read
 * (ADR 0110). Any other write error stays an error.
 */
function writer(stream: NodeJS.WriteStream): (line: string) => void {
  let readerGone = false;
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    readerGone = true;
  });
  return (line) => {
    if (!readerGone) stream.write(`${line}\n`);
  };
}

process.exitCode = await runCli(process.argv.slice(2), process.env, {
  out: writer(process.stdout),
  err: writer(process.stderr),
  readStdin,
  promptSecret,
});
