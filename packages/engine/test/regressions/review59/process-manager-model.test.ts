import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import type { RepairCommand } from '../../../src/index.ts';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { testDbKind } from '../../support/test-database.ts';
import {
  finalStates,
  fulfil,
  operatorTable,
  rowsOf,
  shipLateMs,
  timerFault,
  table,
  type MessageType,
  type ModelInstance,
} from './support/fulfil-model.ts';

/**
 * Review 59: a model-based property test of the process-manager guarantees (seed 004, ADR 0008, 0012,
 * 0101, 0116). fast-check generates deliveries (duplicates, out of order, to several keys, to finished
 * instances), due timeouts, operator commands and forced transitions through `engine.repairs`, two
 * replicas delivering one message at once and a replica restart; a plain TypeScript model says what
 * each must do, and after each sequence the rows are compared with the model.
 */
const states = fulfil.states;
const types: MessageType[] = [
  'Paid',
  'Reserved',
  'Reserved',
  'Rejected',
  'Booked',
  'RefundDone',
  'RefundFailed',
  'Glitch',
  'Glitch',
];

type Op =
  | { kind: 'deliver'; key: number; type: MessageType; n: number; replica: 0 | 1 }
  | { kind: 'race'; key: number; type: MessageType; n: number }
  | { kind: 'advance'; ms: number; sweepers: 1 | 2 }
  | { kind: 'command'; key: number; name: 'RetryShipment' | 'AcceptRefund'; stale: string | null }
  | { kind: 'force'; key: number; to: string }
  | { kind: 'release'; key: number; mode: 'retry' | 'skip' }
  | { kind: 'restart' }
  | { kind: 'poison'; key: number }
  | { kind: 'timers'; broken: boolean };

const key = fc.integer({ min: 0, max: 1 });
const n = fc.integer({ min: 0, max: 1 });
const type = fc.constantFrom(...types);
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant('deliver' as const),
      key,
      type,
      n,
      replica: fc.constantFrom(0 as const, 1 as const),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('race' as const), key, type, n }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      ms: fc.constantFrom(10_000, 3600_000, shipLateMs + 1000),
      sweepers: fc.constantFrom(1 as const, 2 as const),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('command' as const),
      key,
      name: fc.constantFrom('RetryShipment' as const, 'AcceptRefund' as const),
      stale: fc.option(fc.constantFrom(...states), { freq: 4 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('force' as const), key, to: fc.constantFrom(...states) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('release' as const),
      key,
      mode: fc.constantFrom('retry' as const, 'skip' as const),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'restart' as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('poison' as const), key }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('timers' as const), broken: fc.boolean() }) },
);

describe(`review 59: the process-manager guarantees against a reference model (${testDbKind()})`, () => {
  let t!: Awaited<ReturnType<typeof openTestEngine>>;
  let b!: TestEngine;
  const processes = {
    quarantine_after_seconds: 5,
    store_retry: { max_attempts: 1 },
    timeout_retry_seconds: 1,
    timeout_retry_max_seconds: 4,
  };
  const replica = () =>
    createTestEngine({ db: t.db, clock: t.clock, flows: [], actions: [], processes: [fulfil], config: { processes } });
  beforeAll(async () => {
    t = await openTestEngine({ flows: [], actions: [], processes: [fulfil], config: { processes } });
    b = await replica();
  });
  afterAll(async () => {
    await b?.close();
    await t?.closeAll();
  });

  it('every sequence of deliveries, timeouts, repairs, races and restarts agrees with the model', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 4, maxLength: 24 }), async (ops) => {
        const run = randomUUID().slice(0, 8);
        const model = new Map<number, ModelInstance>();
        const inbox = new Set<string>();
        const log: string[] = [];
        const engines = () => [t.engine, b.engine];
        const version = async (id: string) =>
          (await t.db.prisma.sagaInstance.findUniqueOrThrow({ where: { id } })).version;

        /** The model's answer to one delivery, updating it. */
        const expectDelivery = (k: number, ty: MessageType, id: string, releasing = false): string => {
          if (inbox.has(id)) return 'duplicate';
          let m = model.get(k);
          if (!m) {
            if (ty !== 'Paid') return 'unroutable';
            m = {
              id: null,
              key: `${run}-${k}`,
              state: 'Awaiting',
              visit: 0,
              log: [],
              outbox: 0,
              timers: [],
              appliedRepairs: 0,
              status: 'ACTIVE',
              failure: null,
              kept: [],
              appliedTimeouts: 0,
              staleTimeouts: 0,
            };
            model.set(k, m);
          }
          const now = t.clock.now().getTime();
          if (m.status === 'QUARANTINED' && !releasing) {
            m.kept.push({ id, type: ty });
            return 'skipped_quarantined';
          }
          if (ty === 'Glitch' && !finalStates.includes(m.state) && m.state !== 'Awaiting') {
            if (releasing) {
              m.status = 'QUARANTINED';
              m.failure = { id, firstFailedAt: now };
              return 'quarantined';
            }
            if (m.failure === null) m.failure = { id, firstFailedAt: now };
            else if (now - m.failure.firstFailedAt >= 5_000) {
              m.status = 'QUARANTINED';
              m.failure = { id, firstFailedAt: m.failure.firstFailedAt };
              return 'quarantined';
            } else m.failure = { id, firstFailedAt: m.failure.firstFailedAt };
            return 'threw';
          }
          inbox.add(id);
          if (m.failure?.id === id) m.failure = null;
          const to = table[ty]![m.state];
          if (!to) return 'ignored';
          if (to !== m.state) m.visit += 1;
          m.state = to;
          if (finalStates.includes(to)) m.status = 'COMPLETED';
          m.log.push(id);
          m.outbox += 1;
          if (ty === 'Reserved')
            m.timers.push({ armedVisit: m.visit, dueAt: t.clock.now().getTime() + shipLateMs, fired: false });
          return 'applied';
        };
        const sweepModel = () => {
          const now = t.clock.now().getTime();
          for (const m of model.values())
            if (m.status !== 'QUARANTINED')
              for (const tm of m.timers.filter((x) => !x.fired && x.dueAt <= now)) {
                tm.fired = true;
                if (m.state === 'Booking' && m.visit === tm.armedVisit && timerFault.broken) {
                  // A failing timeout stays Pending (retried; every advance is past its retry time).
                  tm.fired = false;
                  tm.failed = true;
                } else if (m.state === 'Booking' && m.visit === tm.armedVisit) {
                  m.state = 'Refunding';
                  m.visit += 1;
                  m.log.push('timeout');
                  m.outbox += 1;
                  m.appliedTimeouts += 1;
                } else m.staleTimeouts += 1;
              }
        };

        const opening: Op[] = [
          { kind: 'deliver', key: 0, type: 'Paid', n: 0, replica: 0 },
          { kind: 'deliver', key: 1, type: 'Paid', n: 0, replica: 1 },
        ];
        // A poison message that keeps failing past the budget: Glitch, 10 s, another Glitch.
        const expand = (o: Op): Op[] =>
          o.kind === 'poison'
            ? [
                { kind: 'deliver', key: o.key, type: 'Glitch', n: 0, replica: 0 },
                { kind: 'advance', ms: 10_000, sweepers: 1 },
                { kind: 'deliver', key: o.key, type: 'Glitch', n: 1, replica: 1 },
              ]
            : [o];
        for (const o of [...opening, ...ops].flatMap(expand)) {
          if (o.kind === 'deliver' || o.kind === 'race') {
            const id = `${run}-${o.key}-${o.type}-${o.n}`;
            const message = { id, type: o.type, payload: { key: `${run}-${o.key}`, tag: id } };
            if (o.kind === 'race' && o.type === 'Glitch') continue;
            const want = expectDelivery(o.key, o.type, id);
            if (o.kind === 'deliver') {
              let got: string;
              let instanceId: string | null = null;
              try {
                const r = await engines()[o.replica]!.processes.deliver(fulfil, message);
                got = r.outcome;
                instanceId = r.instanceId;
              } catch (err) {
                got = /r59 glitch/.test(String(err)) ? 'threw' : `threw ${String(err)}`;
              }
              log.push(`deliver ${o.key} ${o.type}#${o.n} -> ${got}`);
              expect(got, log.join(' | ')).toBe(want);
              const m = model.get(o.key);
              if (m && instanceId) m.id = instanceId;
            } else {
              const rs = await Promise.all(engines().map((e) => e.processes.deliver(fulfil, message)));
              const got = rs.map((r) => r.outcome).sort();
              log.push(`race ${o.key} ${o.type}#${o.n} -> ${got.join(',')}`);
              if (want === 'skipped_quarantined') expectDelivery(o.key, o.type, id);
              const twice = ['duplicate', 'unroutable', 'skipped_quarantined'].includes(want);
              const wanted = twice ? [want, want] : ['duplicate', want].sort();
              expect(got, log.join(' | ')).toEqual(wanted);
              const m = model.get(o.key);
              const idOf = rs.find((r) => r.instanceId)?.instanceId;
              if (m && idOf) m.id = idOf;
            }
          } else if (o.kind === 'advance') {
            t.clock.advance(o.ms);
            await Promise.all(
              engines()
                .slice(0, o.sweepers)
                .map((e) => e.processes.sweepProcessTimeouts()),
            );
            sweepModel();
            log.push(`advance ${o.ms / 60_000} min, ${o.sweepers} sweeper(s)`);
          } else if (o.kind === 'timers') {
            timerFault.broken = o.broken;
            log.push(o.broken ? 'break timers' : 'fix timers');
          } else if (o.kind === 'restart') {
            await b.close();
            b = await replica();
            log.push('restart replica');
          } else if (o.kind !== 'poison') {
            const m = model.get(o.key);
            if (!m?.id) continue;
            const expectedState = o.kind === 'command' ? (o.stale ?? m.state) : m.state;
            const common = {
              target: { instanceId: m.id },
              expected: { state: expectedState, version: await version(m.id) },
              actor: 'r59@example.test',
              reason: 'review 59',
              idempotencyKey: `r59-${randomUUID()}`,
            };
            const cmd = (
              o.kind === 'command'
                ? { kind: 'instance.command', command: o.name, input: { tag: `op-${o.name}-${log.length}` }, ...common }
                : o.kind === 'force'
                  ? { kind: 'instance.force_transition', to: o.to, ...common }
                  : { kind: 'instance.release', mode: o.mode, ...common }
            ) as RepairCommand;
            const completed = finalStates.includes(m.state);
            let want: string;
            if (expectedState !== m.state) want = 'repair_conflict';
            else if (o.kind === 'release')
              // A retry of a Glitch fails again (refused); a skip releases.
              want = m.status !== 'QUARANTINED' || o.mode === 'retry' ? 'repair_refused' : 'applied';
            else if (completed || m.status === 'QUARANTINED') want = 'repair_refused';
            else if (o.kind === 'command' && !operatorTable[o.name]!.from.includes(m.state)) want = 'repair_refused';
            else want = 'applied';
            // Preview, then apply with nothing in between: the preview says what apply does (ADR 0016).
            // (A release is compared in its own test: a-release-says-what-its-kept-messages-will-send.)
            const preview = await t.engine.repairs.preview(cmd);
            const outboxBefore = (await rowsOf(t.db, m.id)).outbox.length;
            let got: string;
            try {
              await t.engine.repairs.apply(cmd);
              got = 'applied';
            } catch (err) {
              got = (err as { code?: string }).code ?? String(err);
            }
            if (o.kind !== 'release') {
              const after = await rowsOf(t.db, m.id);
              const moves = preview.effects.transitions.filter((x) => x.subject === `instance ${m.id}`);
              expect(
                {
                  applicable: preview.applicable,
                  outbox: preview.applicable ? preview.effects.outboxMessages.length : 0,
                  to: preview.applicable ? moves.at(-1)?.to : after.inst!.current_state,
                },
                `preview of ${o.kind}: ${log.join(' | ')}`,
              ).toEqual({
                applicable: got === 'applied',
                outbox: after.outbox.length - outboxBefore,
                to: after.inst!.current_state,
              });
            }
            log.push(
              `${o.kind} ${o.key} ${o.kind === 'command' ? o.name : o.kind === 'force' ? o.to : o.mode}${o.kind === 'command' && o.stale ? ` (drafted in ${o.stale})` : ''} -> ${got}`,
            );
            expect(got, log.join(' | ')).toBe(want);
            if (got === 'applied' && o.kind === 'release') {
              m.appliedRepairs += 1;
              inbox.add(m.failure!.id);
              m.failure = null;
              m.status = finalStates.includes(m.state) ? 'COMPLETED' : 'ACTIVE';
              const seen = new Set<string>();
              const kept = m.kept.filter((x) => !inbox.has(x.id) && !seen.has(x.id) && seen.add(x.id));
              m.kept = [];
              for (const [i, x] of kept.entries()) {
                const r = expectDelivery(o.key, x.type, x.id, true);
                if (r === 'quarantined') {
                  m.kept = kept.slice(i);
                  break;
                }
              }
            } else if (got === 'applied') {
              const to = o.kind === 'command' ? operatorTable[o.name]!.to : o.kind === 'force' ? o.to : m.state;
              if (to !== m.state) m.visit += 1;
              m.state = to;
              if (finalStates.includes(to)) m.status = 'COMPLETED';
              m.appliedRepairs += 1;
              if (o.kind === 'command') {
                m.log.push(`op-${o.name}-${log.length - 1}`);
                m.outbox += 1;
                if (o.name === 'RetryShipment')
                  m.timers.push({ armedVisit: m.visit, dueAt: t.clock.now().getTime() + shipLateMs, fired: false });
              }
            }
          }
        }

        // A failing timeout shows as failing while it fails (ADR 0127).
        for (const m of model.values()) {
          if (!m.id || m.status === 'QUARANTINED') continue;
          const now = t.clock.now().getTime();
          const live = (x: { armedVisit: number }) => m.state === 'Booking' && x.armedVisit === m.visit;
          const failing = m.timers.some((x) => !x.fired && x.failed === true && x.dueAt <= now && live(x));
          // A failed timeout whose visit is over is left out here: whether it still shows is defect D2
          // (a-repaired-instance-stops-showing-its-stale-failing-timeout.test.ts).
          if (m.timers.some((x) => !x.fired && x.failed === true && !live(x))) continue;
          const view = await t.engine.processes.find(m.id);
          expect(view?.failingTimeout !== null, `failingTimeout of ${m.key}: ${log.join(' | ')}`).toBe(failing);
        }
        // Let every armed timeout come due and fire.
        timerFault.broken = false;
        t.clock.advance(shipLateMs + 1000);
        await t.engine.processes.sweepProcessTimeouts();
        sweepModel();
        log.push('final sweep');
        if (process.env.R59_LOG) console.info(log.join(' | '));

        for (const m of model.values()) {
          const where = `instance ${m.key}\n  sequence: ${log.join(' | ')}`;
          const rows = await rowsOf(t.db, m.id!);
          expect({ state: rows.inst!.current_state, log: rows.inst!.state.log }, where).toEqual({
            state: m.state,
            log: m.log,
          });
          expect({ status: rows.inst!.status, failure: rows.inst!.failure_redelivery_key }, where).toEqual({
            status: m.status,
            failure: m.failure?.id ?? null,
          });
          // The history's moves chain from the initial state to the state stored, none out of a final state.
          const moves = rows.history.filter((h) => h.outcome === 'applied' || h.outcome === 'repair');
          let at = 'Awaiting';
          for (const h of moves) {
            expect({ from: h.from_state, id: h.message_id }, where).toEqual({ from: at, id: h.message_id });
            expect(finalStates.includes(h.from_state), `a move out of ${h.from_state}: ${where}`).toBe(false);
            at = h.to_state;
          }
          expect(at, where).toBe(m.state);
          const appliedIds = moves.filter((h) => h.outcome === 'applied').map((h) => h.message_id);
          expect(new Set(appliedIds).size, `a message applied twice: ${where}`).toBe(appliedIds.length);
          expect(moves.filter((h) => h.outcome === 'repair').length, where).toBe(m.appliedRepairs);
          // Every send in the outbox exactly once.
          expect(rows.outbox.length, where).toBe(m.outbox);
          expect(new Set(rows.outbox.map((r) => r.message_id)).size, where).toBe(rows.outbox.length);
          expect(rows.outbox.map((r) => r.tag).sort(), where).toEqual([...m.log].sort());
          // Each timeout fired once (applied or a stale no-op), none left Pending past its due time.
          expect(
            rows.timeouts.map((x) => x.status),
            where,
          ).toEqual(m.timers.map((x) => (x.fired ? 'Delivered' : 'Pending')));
          const live = m.timers.filter((x) => !x.fired && m.state === 'Booking' && x.armedVisit === m.visit);
          expect(rows.inst!.next_timer_due_at?.getTime() ?? null, `next timer: ${where}`).toBe(
            live.length ? Math.min(...live.map((x) => x.dueAt)) : null,
          );
          const timeoutRows = rows.history.filter((h) => h.message_type === 'ShipLate');
          expect(
            {
              applied: timeoutRows.filter((h) => h.outcome === 'applied').length,
              ignored: timeoutRows.filter((h) => h.outcome === 'ignored').length,
            },
            where,
          ).toEqual({ applied: m.appliedTimeouts, ignored: m.staleTimeouts });
          // The read API says what the rows say: find, history and findByStatus.
          const view = await t.engine.processes.find(m.id!);
          expect(
            {
              status: view?.status,
              state: view?.currentState,
              next: view?.nextTimerDueAt?.getTime() ?? null,
              failure: view?.failure?.redeliveryKey ?? null,
              completed: view?.completedAt !== null,
            },
            `find: ${where}`,
          ).toEqual({
            status: m.status,
            state: m.state,
            next: rows.inst!.next_timer_due_at?.getTime() ?? null,
            failure: m.failure?.id ?? null,
            completed: m.status === 'COMPLETED',
          });
          const { transitions } = await t.engine.processes.history(m.id!, { limit: 1000 });
          expect(
            transitions.map((h) => `${h.outcome} ${h.from}->${h.to} ${h.messageId}`),
            `history: ${where}`,
          ).toEqual(rows.history.map((h) => `${h.outcome} ${h.from_state}->${h.to_state} ${h.message_id}`));
          // Paged backwards (limit 3, `before`) and forwards (limit 2, `after`), the history is the same.
          const backwards: string[] = [];
          let before: string | undefined;
          for (;;) {
            const page = await t.engine.processes.history(m.id!, { limit: 3, ...(before ? { before } : {}) });
            backwards.unshift(...page.transitions.map((h) => `${h.outcome} ${h.messageId}`));
            if (!page.truncated || page.transitions.length === 0) break;
            before = page.transitions[0]!.id;
          }
          const forwards: string[] = [];
          let after = (await t.engine.processes.history(m.id!, { limit: 1000 })).transitions[0]?.id;
          if (after !== undefined) {
            forwards.push(`${transitions[0]!.outcome} ${transitions[0]!.messageId}`);
            for (;;) {
              const page = await t.engine.processes.history(m.id!, { limit: 2, after });
              forwards.push(...page.transitions.map((h) => `${h.outcome} ${h.messageId}`));
              if (page.transitions.length === 0) break;
              after = page.transitions.at(-1)!.id;
            }
          }
          const whole = rows.history.map((h) => `${h.outcome} ${h.message_id}`);
          expect({ backwards, forwards }, `history pages: ${where}`).toEqual({ backwards: whole, forwards: whole });
          const listed = await t.engine.processes.findByStatus(m.status, new Date(8.64e15), 10_000, {
            processName: fulfil.name,
          });
          expect(
            listed.some((x) => x.id === m.id),
            `findByStatus(${m.status}): ${where}`,
          ).toBe(true);
          // Every repair audited once: one applied row per applied command.
          expect(rows.repairs.filter((r) => r.status === 'applied').length, where).toBe(m.appliedRepairs);
          expect(new Set(rows.repairs.map((r) => r.idempotency_key)).size, where).toBe(rows.repairs.length);
        }
      }),
      { numRuns: Number(process.env.R59_RUNS ?? 60), endOnFailure: true },
    );
  }, 240_000);
});
