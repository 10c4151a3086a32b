/** `sagaflow help`: every command, the settings, and what the exit status means. */
export const usage = `usage: npm run sagaflow -- <command> [options]

Talks to the running control plane at SAGAFLOW_URL (default http://CONTROL_HOST:CONTROL_PORT, i.e.
http://127.0.0.1:4000) with the operator API token in SAGAFLOW_TOKEN. Output is for people; add
--json for one JSON document on stdout (errors too, with the control plane's answer).

Read (viewer)
  whoami                                   the token's operator, role and expiry
  runs list [--status S]... [--flow NAME] [--stuck] [--stuck-reason R] [--search ID|KEY]
            [--order newest|stalest] [--limit N] [--cursor C]
  run show <run-id>                        status, steps, compensations, events, safe repairs
  instances list [--status S]... [--process NAME] [--state S] [--failing] [--search ID|KEY]
                 [--order newest|stalest] [--limit N] [--cursor C]
  instance show <instance-id>              state, failure, history, the process's own commands
  repairs                                  the repair catalogue this control plane offers

Repair (operator; force-transition: admin). Each needs --reason TEXT, previews with --dry-run,
is drafted against the state it reads first (or --expect-status / --expect-step-status /
--expect-attempts / --expect-state / --expect-version; a requeue: --expect-status Dead
--expect-attempts N), and carries an idempotency key
(generated, or --idempotency-key K: the same key never acts twice; given for a finished run,
a key that was used prints its first result). Each option that takes one value is given once.
  kick <run-id>                            a fresh job for the step the run is parked on
  retry <run-id> --step N                  retry a Failed/Errored step now
  reclaim <run-id> --step N                reclaim a Running step whose worker is gone
  reclaim <run-id> --compensation L.O      the same for compensation O of rollback level L
  cancel <run-id> [--compensate] [--cleanup-seconds S]
                                           cancel; the run's code compensates what it did
  terminate <run-id>                       close the run now, no compensation
  expire <run-id> [--cleanup-seconds S]    expire now, as if its deadline passed
  signal <run-id> <name> [--payload JSON]  send the run a signal
  complete-step <run-id> --step N --output JSON
                                           record a step Completed with this output
  resume-from <run-id> --step N            re-run step N and those after it
  release <instance-id> --retry|--skip     release a quarantined instance
  command <instance-id> <name> [--input JSON]
                                           one of the process's own operator commands
  force-transition <instance-id> <state>   move the instance to a state (admin)
  requeue <outbox-row-id>                  send a Dead outbox message again (same message id);
                                           \`instance show\` lists an instance's Dead rows
  requeue <outbox-row-id> <outbox-row-id>... | --instance <instance-id>...
          | --dead [--destination D] [--limit N]
                                           one bulk: the named rows, every Dead row of the
                                           instances, or (--dead) the N longest-dead rows of the
                                           outbox (default 100, at most 500), each drafted
                                           against what it reads now; a
                                           row not Dead is left out (listed, with why); --dry-run
                                           previews each; one key, one approval if gated; exit 0
                                           if every row was requeued, 2 if any was not
  repair <kind> <run-instance-or-outbox-row-id> [--step N] [--params JSON]
                                           any catalogue command by its kind (see \`repairs\`)

Approvals (a gated repair waits for a second operator: list and show for anyone; decide: operator,
a command only an admin may draft: admin; never the drafter, nor whoever made the drafter's token)
  approvals list [--status pending|decided|all|S] [--limit N] [--cursor C]
                                           the queue, newest first (default: pending)
  approval show <approval-id>              the command, its reason, what became of it; a pending
                                           one is previewed again against the state now
  approve <approval-id>                    apply it, still guarded by the state it was drafted
                                           against: exit 0 applied, 2 not (the state moved, or it
                                           was decided or expired meanwhile)
  reject <approval-id> --reason TEXT       nothing is applied; the drafter reads why

Tokens and operators
  token create --name NAME [--operator OP] [--expires-in-days D]
               [--sign-in YOUR-NAME [--password-stdin]]
                                           a new API token, shown once; --sign-in makes your
                                           first one with your password instead of a token
  token list [--operator OP | --all] [--revoked]
  token revoke <token-id>
  create-operator <name> --role viewer|operator|admin [--display-name TEXT] [--password-stdin]
                                           (admin) the password is asked for, or read from stdin
  operators list                           (admin) every operator, role, enabled or disabled
  operator set-role <name> viewer|operator|admin
  operator disable <name> | operator enable <name>
                                           (admin) for another operator; disabling ends their
                                           sessions; audited
  passwd [--password-stdin]                your own password: the current one, then the new one
                                           (stdin: two lines); your sessions end, tokens stay
  reset-password <name> [--password-stdin] (admin) another operator's password; their sessions end
  reset-password <name> --local [--password-stdin]
                                           break-glass, no admin needed: opens the database itself
                                           (DATABASE_URL or SAGAFLOW_DATA_DIR, with the control plane
                                           stopped for an embedded one); on the trail as local:<user>

Local maintenance (opens the database itself: DATABASE_URL, or SAGAFLOW_DATA_DIR, which is
refused while a control plane holds it); prints JSON
  monitor sweep [--doctor]                 one expiration-monitor pass (--doctor: R1-R4 too)
  doctor sweep                             one doctor pass, under the same lease
  prune [--older-than AGE] [--batch-size N] [--dry-run]
                                           delete finished runs, finished instances' transitions,
                                           published outbox rows, inbox records and gone
                                           workers' rows older than AGE
                                           (30d, 12h, 3600s; default retention.older_than_seconds,
                                           30d) in batches, progress on stderr; --dry-run counts

Exit status
  0   done (a repair applied, or replayed the first result of its idempotency key)
  1   error: control plane unreachable, not found, server error; nothing known to have changed
      (an answer cut off after a repair was sent: it may have been done; retry with the printed key)
  2   refused: the repair's expected state no longer holds (repair_conflict) or the target
      cannot take it (repair_refused); a --dry-run that would be refused; a sweep that did not
      run. Nothing changed: read the state again (the command drafts from it) and decide.
  3   unauthenticated or forbidden: no token, a token unknown/revoked/expired/rate-limited or
      not sendable (a hint from token list, a line break), or a role too low
  4   not done yet: the repair awaits a second operator's approval (\`approvals list\`)
  64  usage: a bad command line, or input the control plane refused as malformed`;
