import { z } from 'zod';
import { EngineError } from '../errors/engine-error.ts';

const levels = z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal']);
const seconds = z
  .number()
  .int()
  .min(1)
  .max(10 * 365 * 86_400);
/** A retry delay: at most ten years, as `seconds`, so a retry's time is always a date. */
export const maxBackoffMs = 10 * 365 * 86_400_000;
/** A JSON size limit: at most 100 MiB (PostgreSQL's jsonb holds at most 255 MB). */
const bytes = z
  .number()
  .int()
  .min(1)
  .max(100 * 1_048_576);
const reclaim = z
  .object({ enabled: z.boolean().default(false), after_seconds: seconds.default(900) })
  .strict()
  .prefault({});

/** Every engine setting and its default; the defaults live here and nowhere else. */
export const engineConfigSchema = z
  .object({
    worker: z
      .object({
        concurrency: z.number().int().min(1).max(1000).default(4),
        poll_interval_ms: z.number().int().min(10).max(60_000).default(500),
        /**
         * LISTEN for jobs queued by any process and claim at once (ADR 0038); the poll stays as the
         * fallback. Off: the pool finds other processes' jobs only by polling.
         */
        notify: z.boolean().default(true),
        lease_seconds: z.number().int().min(1).max(86_400).default(60),
        /**
         * A completed step's outcome that the database refused to take (unreachable) is written
         * again with backoff, base * 2^(n-1) up to max, for at most max_attempts tries by the job
         * (~1 min by default); after that the worker keeps it and tries at every poll until written.
         */
        outcome_retry: z
          .object({
            max_attempts: z.number().int().min(1).max(1000).default(20),
            base_delay_ms: z.number().int().min(0).max(60_000).default(100),
            max_delay_ms: z.number().int().min(0).max(600_000).default(5000),
          })
          .strict()
          .prefault({}),
        /** Each running worker pool stamps its row in `workers` this often, on the database clock. */
        heartbeat_interval_ms: z.number().int().min(100).max(600_000).default(5000),
        /** A worker whose last heartbeat is older than this is gone: the steps it holds may be reclaimed. */
        dead_after_seconds: seconds.default(30),
        /**
         * How long one of a run's transactions may wait for a database connection (Prisma's maxWait;
         * its default, 2 s, failed jobs under load). One that got none in time is started again,
         * for up to the lease.
         */
        transaction_wait_ms: z.number().int().min(10).max(600_000).default(10_000),
      })
      .strict()
      .prefault({}),
    retry: z
      .object({
        base_delay_ms: z.number().int().min(0).max(maxBackoffMs).default(1000),
        max_delay_ms: z.number().int().min(0).max(maxBackoffMs).default(60_000),
      })
      .strict()
      .prefault({}),
    /** May a step still marked Running be executed again? Off by default (seed 000). */
    reclaim: z.object({ actions: reclaim, compensations: reclaim }).strict().prefault({}),
    /** The overlap lock per run/step (seed 000's WithoutOverlapping), independent of reclaim. */
    locks: z
      .object({ enabled: z.boolean().default(false), action_ttl_seconds: seconds.default(900) })
      .strict()
      .prefault({}),
    /** The doctor (seed 000): re-dispatches work whose job was lost. Opt-in. */
    repair: z
      .object({
        enabled: z.boolean().default(false),
        /** R1: how long a run may sit Pending with no job before its job is presumed lost. */
        grace_seconds: seconds.default(60),
        /** R3: re-dispatch ordinary Running actions past their reclaim deadline. */
        redispatch_stale_running_actions: z.boolean().default(true),
        /** Re-dispatches the doctor may make per run; kick refills it. */
        budget: z.number().int().min(1).max(1000).default(5),
      })
      .strict()
      .prefault({}),
    /** The expiration monitor (seed 000): business deadlines, enforced by a sweep. */
    monitor: z
      .object({
        expiration: z
          .object({
            /** Deadlines given to steps and runs that do not set their own; null = none. */
            defaults: z
              .object({
                action: seconds.nullable().default(null),
                compensation: seconds.nullable().default(null),
                run: seconds.nullable().default(null),
              })
              .strict()
              .prefault({}),
            /** The hold-off after a run's rollback could not be planned: doubles per failure up to max. */
            backoff: z
              .object({ base_seconds: seconds.default(30), max_seconds: seconds.default(3600) })
              .strict()
              .prefault({}),
            /** How long the planning replay of one overdue run may take before it counts as expiry_failed. */
            plan_timeout_ms: z.number().int().min(10).max(600_000).default(10_000),
            /** Candidates per page: one sweep pages through overdue rows this many at a time. */
            page_size: z.number().int().min(1).max(10_000).default(100),
          })
          .strict()
          .prefault({}),
        /**
         * How long after a terminate's fence closed a run's cleanup window the monitor ends the run, when the
         * terminate's batches have not (they stopped between two: ADR 0140).
         */
        unfinished_terminate_after_seconds: seconds.default(60),
      })
      .strict()
      .prefault({}),
    /**
     * The monitor's, doctor's and timeout scheduler's sweeps (ADR 0026): set-based batches through
     * partial indexes, a pass bounded in time rather than in rows, each batch its own transaction.
     */
    sweeps: z
      .object({
        /** Candidate rows one set-based statement takes (steps to expire, runs for the doctor). */
        batch_size: z.number().int().min(1).max(50_000).default(1000),
        /** A pass stops starting batches after this long; the loop starts the next pass at once when rows are left. */
        pass_budget_ms: z.number().int().min(10).max(600_000).default(5000),
        /** How long one sweep transaction may wait for a connection, and run (statement_timeout included). */
        transaction_timeout_ms: z.number().int().min(100).max(600_000).default(30_000),
        /**
         * How long one sweep of the monitor waits, in all, for the rows of runs other sessions hold (a
         * worker's round holds one for a moment); past it each further held run is waited for 100 ms, then
         * passed over until the next pass (ADR 0135).
         */
        held_run_wait_ms: z.number().int().min(0).max(600_000).default(1000),
      })
      .strict()
      .prefault({}),
    runs: z
      .object({
        /** The engine's backstop: a run open this long is closed as TimedOut, without compensation. Null = none. */
        default_timeout_seconds: seconds.nullable().default(null),
        /** How long a cancelled run may keep running its cleanup (compensations). */
        cancel_cleanup_seconds: seconds.default(300),
      })
      .strict()
      .prefault({}),
    /** The outbox publisher (ADR 0009): at-least-once, per-source order, backoff, then Dead. */
    outbox: z
      .object({
        /** Rows claimed per pass. */
        batch_size: z.number().int().min(1).max(1000).default(100),
        poll_interval_ms: z.number().int().min(10).max(60_000).default(1000),
        /** How long a claim hides a row from other publishers; a publisher that dies is retried after it. */
        visibility_timeout_seconds: seconds.default(30),
        /** Attempts before a row is marked Dead (kept, never deleted). */
        max_attempts: z.number().int().min(1).max(1000).default(10),
        /** How long the claim transaction may wait for a connection, and run (statement_timeout included). */
        transaction_timeout_ms: z.number().int().min(100).max(600_000).default(30_000),
        /** While batches come back full the publisher goes on at once; it reports progress every this long. */
        pass_budget_ms: z.number().int().min(10).max(600_000).default(5000),
        /**
         * A publish not acknowledged within this long fails (recorded, retried with backoff), whatever
         * the transport; never longer than what is left of the claim window, which the publisher renews
         * before a row once less than half of it is left (ADR 0139). A source whose publish is still out after
         * a poll interval no longer holds back the other sources' next pass.
         */
        publish_timeout_ms: z.number().int().min(10).max(600_000).default(30_000),
        /** Retry n waits base * 2^(n-1), at most max. */
        backoff: z
          .object({
            base_delay_ms: z.number().int().min(0).max(maxBackoffMs).default(1000),
            max_delay_ms: z.number().int().min(0).max(maxBackoffMs).default(300_000),
          })
          .strict()
          .prefault({}),
      })
      .strict()
      .prefault({}),
    /**
     * Retention (ADR 0027): finished runs with their steps and events, the transitions of finished
     * instances, published outbox rows, old inbox records and the rows of worker pools gone that long
     * are deleted in batches once older than `older_than_seconds`. `engine.retention.prune()` and `sagaflow prune` run it on demand; with
     * `enabled` a control plane also runs it every `interval_seconds` (one replica at a time).
     */
    retention: z
      .object({
        enabled: z.boolean().default(false),
        older_than_seconds: seconds.default(30 * 86_400),
        interval_seconds: seconds.default(3600),
        /** Runs (or transitions, outbox rows, inbox records) per batch; each batch is one transaction. */
        batch_size: z.number().int().min(1).max(10_000).default(500),
        /** How long one batch's transaction may wait for, and hold, its connection. */
        transaction_timeout_ms: z.number().int().min(100).max(600_000).default(60_000),
      })
      .strict()
      .prefault({}),
    /**
     * Vacuum and analyze of the engine's tables on embedded PGlite (ADR 0050), where PostgreSQL runs
     * single-user and its autovacuum never runs: every `interval_ms` the due tables (autovacuum's
     * thresholds) are vacuumed or analyzed one at a time while the worker pool runs. Ignored on a
     * PostgreSQL server, whose autovacuum owns its tables.
     */
    maintenance: z
      .object({
        enabled: z.boolean().default(true),
        interval_ms: z.number().int().min(10).max(86_400_000).default(60_000),
      })
      .strict()
      .prefault({}),
    /** Process managers (seeds 002 and 004). */
    processes: z
      .object({
        /**
         * Quarantine budget, measured from an instance's first recorded failure. Absent = quarantine
         * off (the default). Zero, negative and null are refused: leave it out to turn it off.
         */
        quarantine_after_seconds: seconds.optional(),
        /** Transient database errors (serialization, deadlock, lost connection) are retried first. */
        store_retry: z
          .object({
            /** Total attempts, the first included; 1 = no retry. */
            max_attempts: z.number().int().min(1).max(100).default(10),
            base_delay_ms: z.number().int().min(0).max(60_000).default(100),
            max_delay_ms: z.number().int().min(0).max(600_000).default(2000),
          })
          .strict()
          .prefault({}),
        /**
         * A timeout whose delivery threw is tried again this much later (its deadline stays); each
         * further failure doubles the delay, up to `timeout_retry_max_seconds` (ADR 0127).
         */
        timeout_retry_seconds: seconds.default(30),
        /**
         * The longest delay between two tries of a failing timeout. It is retried for ever at most
         * this far apart, never quarantining its instance (seed 002); it shows on the instance as
         * `failingTimeout` until it is delivered. Not below `timeout_retry_seconds`.
         */
        timeout_retry_max_seconds: seconds.default(3600),
        /** How long one deliver transaction may wait for, and hold, its connection. */
        transaction_timeout_ms: z.number().int().min(100).max(600_000).default(30_000),
      })
      .strict()
      .superRefine((p, ctx) => {
        if (p.timeout_retry_max_seconds < p.timeout_retry_seconds)
          ctx.addIssue({
            code: 'custom',
            path: ['timeout_retry_max_seconds'],
            message: `must be at least timeout_retry_seconds (${p.timeout_retry_seconds})`,
          });
      })
      .prefault({}),
    /**
     * What the engine accepts from its callers (ADR 0013). Bigger or deeper values are refused as
     * `invalid_input` naming the field, before any write; sizes are bytes of compact JSON (UTF-8).
     */
    limits: z
      .object({
        /** startFlow's input (and a child flow's). */
        flow_input_bytes: bytes.default(1_048_576),
        /** A signal's payload. */
        signal_payload_bytes: bytes.default(1_048_576),
        /** A process message's payload, and an operator command's input. */
        message_payload_bytes: bytes.default(1_048_576),
        /** An action's output: a bigger one is the action's failure. */
        action_output_bytes: bytes.default(1_048_576),
        /** Deepest nesting of arrays and objects in any of the above. */
        json_depth: z.number().int().min(1).max(1000).default(64),
        /** Longest id, business key, tag, signal name, reason, idempotency key, message id or type. */
        text_length: z.number().int().min(1).max(1_000_000).default(1000),
        /**
         * Most steps one run may record (actions, waits, children, values: its sequence numbers, ADR
         * 0125). The replay that would start one more ends the run Failed naming this setting, without
         * running its code further: a flow that schedules a step after every step stops here instead of
         * growing for ever. A longer process should go on as a new run (a child, or a fresh start).
         */
        max_steps_per_run: z.number().int().min(1).max(100_000_000).default(10_000),
        /**
         * The fraction of `max_steps_per_run` at which a run's replay journals the anomaly
         * `run_step_limit_near` (once, as it starts that step), for operators to see before the limit
         * ends the run.
         */
        steps_per_run_warning_fraction: z.number().gt(0).max(1).default(0.5),
      })
      .strict()
      .prefault({}),
    /** Two-person approvals of repair commands (ADR 0020); the policy itself is stored, set by an admin. */
    approvals: z
      .object({
        /** A pending approval not decided this long after it was drafted expires: it can no longer be approved. */
        expire_after_seconds: seconds.default(86_400),
        /**
         * An approved bulk still `applying` this long after it was claimed is taken as interrupted
         * (its approver stopped part-way) and finished by `approvals.resumeInterrupted()`.
         */
        resume_applying_after_seconds: seconds.default(300),
      })
      .strict()
      .prefault({}),
    logging: z
      .object({
        /** Level at which anomalies are also logged; null = off. */
        anomaly_level: levels.nullable().default('info'),
      })
      .strict()
      .prefault({}),
  })
  .strict();

export type EngineConfig = z.output<typeof engineConfigSchema>;
export type EngineConfigInput = z.input<typeof engineConfigSchema>;

/** Parses config once at the edge; the error names the offending key. */
export function parseEngineConfig(input: unknown): EngineConfig {
  const parsed = engineConfigSchema.safeParse(input ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue ? [...issue.path, ...('keys' in issue ? issue.keys : [])].join('.') : '';
    throw new EngineError('config_invalid', `invalid engine config at "${path}": ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}
