import { runCli } from './cli/run-cli.ts';
import { parseEnv } from './env.ts';

// The operator's command line: `npm run sagaflow -- <command>` (see cli/run-cli.ts for the commands).
try {
  const env = parseEnv(process.env);
  process.exitCode = await runCli(process.argv.slice(2), env, {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
  });
} catch (err) {
  process.stderr.write(`sagaflow: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
}
