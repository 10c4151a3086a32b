// The child worker of sigkill-with-rounds-out.pg.test.ts and review 16's two-rounds-out test: review 13's
// starts (an even run's first step never returns), on a handle whose rounds (ADR 0066) it reports on
// stdout as they go out (`round out`) and come back (`round back`), so the test can kill it while rounds are out.
import { createDatabase, type Database } from '../../../../src/index.ts';
import { startChildPool, urlFromArgs } from '../../../support/child-worker-main.ts';
import { fusedSigkillConfig } from '../../fused-steps/support/fused-sigkill-flow.ts';
import { burstKillFlow } from '../../review13/support/burst-kill-flow.ts';

/** The runs whose first step never returns: the even ones among the first {@link hangingUpTo}, which fit the pool's slots. */
const hangingUpTo = 1500;
const { flow, actions } = burstKillFlow(async (n) =>
  n % 2 === 0 && n < hangingUpTo ? new Promise<never>(() => undefined) : n,
);
const opened = await createDatabase({ kind: 'postgres', url: urlFromArgs(), poolSize: 6 });
const { driver } = opened;
if (driver.statements === undefined) throw new Error('rounds are on by default: the driver must send them');
// Each round ends, inside its transaction and after its writes, by waiting (up to 2 s) for another
// round to reach the same point on another backend, then holding 1 s more: rounds are out together,
// uncommitted, for long enough that the test's kill, sent on this output, lands while they are. A round
// out alone long enough also lets a second go beside it (ADR 0076), so a companion forms.
await driver.exec(`
  create or replace function round_kill_hold() returns void language plpgsql as $$
  declare
    since timestamptz := clock_timestamp();
  begin
    loop
      if exists (
        select 1 from pg_stat_activity
         where pid <> pg_backend_pid() and datname = current_database() and query = 'select round_kill_hold()'
      ) then
        perform pg_sleep(1);
        return;
      end if;
      exit when clock_timestamp() - since > interval '2 s';
      perform pg_sleep(0.005);
    end loop;
  end $$`);
const hold = { text: 'select round_kill_hold()', values: [] };
const db: Database = {
  ...opened,
  driver: {
    ...driver,
    statements: (statements, limits) => {
      process.stdout.write('round out\n');
      return driver.statements!([...statements, hold], limits)
        .then((answers) => answers.slice(0, statements.length))
        .finally(() => process.stdout.write('round back\n'));
    },
  },
};
const engine = await startChildPool({
  db,
  flows: [flow],
  actions,
  // Slots for every hanging run it can start before the kill, so rounds keep going out (with 8, the
  // hanging even runs filled the pool and the rounds stopped; with 512, on an idle machine, the pool was
  // full before five rounds had come back, the starts then went to the queue as one kind, and no round
  // formed after that: seen 0 to 4 rounds and a timeout).
  config: { ...fusedSigkillConfig, worker: { ...fusedSigkillConfig.worker, concurrency: 1000 } },
});
// Bursts of 8 starts every 20 ms until the test kills it. Not one burst after another: a burst waiting
// on a held round would hold up the next, and no other round would form beside it (in CI, 52 rounds
// went and came back one at a time and then the starts ran out). Past the first `hangingUpTo` runs none
// hangs, so the starts go on (up to `startsAtMost`) without filling the pool: with 1,500 starts and
// then none, a run in which no two rounds had formed together by then could never form them (CI saw
// 0 rounds in 60 s once, and nothing on stderr to say why).
const startsAtMost = 20_000;
let started = 0;
let failed = 0;
const bursts = setInterval(() => {
  for (let i = 0; i < 8 && started < startsAtMost; i++)
    void engine.startFlow(flow, started++).catch((err: unknown) => {
      // A start that fails is said on stderr (the test's output) once, then counted, so a run that
      // sees no round says why.
      if (failed++ === 0) process.stderr.write(`round-kill worker: a start failed: ${String(err)}\n`);
    });
  if (started >= startsAtMost) {
    clearInterval(bursts);
    process.stderr.write(`round-kill worker: all ${startsAtMost} starts sent, ${failed} failed\n`);
  }
}, 20);
