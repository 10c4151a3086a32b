import { relative } from 'node:path';
import { createInterface } from 'node:readline';

/**
 * What `npm start` prints once everything answers: where the console is and how to sign in, once
 * each. `admin` is from demoAdminPassword(); `root` makes its file's path short.
 */
export function startBanner({ consoleUrl, admin, root }) {
  const where = admin.file ? `kept in ${relative(root, admin.file)}` : 'from SAGAFLOW_ADMIN_PASSWORD';
  return [
    '',
    `  Sagaflow is running: ${consoleUrl}`,
    `  Sign in as admin with password ${admin.password} (${where})`,
    '  Ctrl-C stops it.',
    '',
  ].join('\n');
}

/** The lines `next start` greets with (its name, the address twice, ready): our banner says it once. */
const nextGreeting = [/^▲ Next\.js /, /^- (Local|Network):/, /^✓ (Starting|Ready in|Running next\.config)/];

// eslint-disable-next-line no-control-regex -- colour codes, should Next colour its output anyway
const colour = /\u001b\[[0-9;]*m/g;

export const isNextGreeting = (line) => nextGreeting.some((re) => re.test(line.replace(colour, '').trim()));

/** Copies a child's output to `out` line by line, leaving out Next's greeting. */
export function forwardWithoutGreeting(stream, out) {
  createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
    if (!isNextGreeting(line)) out.write(`${line}\n`);
  });
}
