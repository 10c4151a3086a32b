import { parseArgs } from 'node:util';

/** What one `npm run bench` does, from its command line. */
export interface BenchOptions {
  /** A smoke run: one round, short windows, no Sagaflow-alone sections. */
  readonly quick: boolean;
  /** Interleaved rounds of the Sagaflow ÷ DBOS comparison, per durability mode. */
  readonly rounds: number;
  /** The Sagaflow-alone sections (latency breakdown, open-loop throughput, deliveries). */
  readonly sagaflowAlone: boolean;
  /** The 3-step flow on embedded PGlite (in memory and on a data directory), beside PostgreSQL. */
  readonly pglite: boolean;
  /** 1, 2 and 4 worker processes against one durable PostgreSQL. */
  readonly scaleOut: boolean;
  /** Rewrite the bench table in the root README (default: full runs only). */
  readonly readme: boolean;
  /** Sagaflow's pools listen for NOTIFY (`worker.notify`, its default); `--no-notify` makes them poll alone. */
  readonly notify: boolean;
}

/** A bad command-line flag: `option` names it, the message says what is accepted. */
export class BenchOptionError extends Error {
  constructor(
    readonly option: string,
    message: string,
  ) {
    super(message);
    this.name = 'BenchOptionError';
  }
}

const maxRounds = 20;

/**
 * Parses the bench's flags: `--quick`, `--rounds N` (1–20, default 3, or 1 with `--quick`),
 * `--peer-only`, `--no-pglite`, `--no-scale-out`, `--no-notify`, `--readme` / `--no-readme`. Unknown flags are
 * refused by name.
 */
export function parseBenchOptions(argv: readonly string[]): BenchOptions {
  let values;
  try {
    ({ values } = parseArgs({
      // `npm run bench -- --quick` can reach us with the `--` still in front through pnpm.
      args: argv.filter((arg) => arg !== '--'),
      strict: true,
      allowPositionals: false,
      options: {
        quick: { type: 'boolean', default: false },
        rounds: { type: 'string' },
        'peer-only': { type: 'boolean', default: false },
        'no-pglite': { type: 'boolean', default: false },
        'no-scale-out': { type: 'boolean', default: false },
        'no-notify': { type: 'boolean', default: false },
        readme: { type: 'boolean' },
        'no-readme': { type: 'boolean', default: false },
      },
    }));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const option = /'(-{1,2}[\w-]+)/.exec(message)?.[1] ?? 'argv';
    throw new BenchOptionError(
      option,
      `${message}. Accepted: --quick, --rounds N, --peer-only, --no-pglite, --no-scale-out, --no-notify, --readme, --no-readme.`,
    );
  }
  const quick = values.quick;
  let rounds = quick ? 1 : 3;
  if (values.rounds !== undefined) {
    rounds = Number(values.rounds);
    if (!Number.isInteger(rounds) || rounds < 1 || rounds > maxRounds) {
      throw new BenchOptionError(
        '--rounds',
        `--rounds must be a whole number from 1 to ${maxRounds}, got ${JSON.stringify(values.rounds)}.`,
      );
    }
  }
  if (values.readme === true && values['no-readme']) {
    throw new BenchOptionError('--readme', '--readme and --no-readme contradict each other; give one.');
  }
  return {
    quick,
    rounds,
    sagaflowAlone: !quick && !values['peer-only'],
    pglite: !values['no-pglite'],
    scaleOut: !values['no-scale-out'],
    readme: values.readme ?? (!quick && !values['no-readme']),
    notify: !values['no-notify'],
  };
}
