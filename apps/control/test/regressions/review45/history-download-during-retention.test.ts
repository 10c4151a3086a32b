import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import { historyPlane, openPausedAt, parsedOrNull, readRest } from '../../support/history-downloads.ts';
import type { ControlPlane } from '../../../src/start-control-plane.ts';

/**
 * Review 45, ADR 0115 §2: a streamed history download is no longer one snapshot, and "the same cut
 * is made when the head row has gone by the end (retention pruned the run during the download)": the
 * client sees a broken transfer, "never a complete-looking, shortened document".
 *
 * Retention never deletes an instance's row (only the transitions of a COMPLETED one, its published
 * outbox rows and its inbox records), and a run's published outbox rows are pruned while the run
 * stays. So a prune that lands between two pages of a section leaves the head in place: the check at
 * the end passes and the download ends as valid JSON that silently lacks rows which existed when it
 * began.
 *
 * The race is driven by progress: the rows are large (a page is ~20 MB, far more than the loopback
 * socket buffers hold while the client does not read), so once the client has received the first
 * transition the server is stuck writing page 1; the prune then runs to completion, and the client
 * reads on.
 */

const transitions = 120;
const detailChars = 400_000;

describe('review 45: a prune during a history download', () => {
  let plane: ControlPlane;
  let cookie = '';
  beforeAll(async () => {
    ({ plane, cookie } = await historyPlane('r45_retention'));
  }, 120_000);
  afterAll(async () => {
    await plane?.stop();
  });

  it("a finished instance's download whose transitions are pruned mid-section is complete or visibly broken, never valid and short", async () => {
    const q = plane.db.driver.query.bind(plane.db.driver);
    const instanceId = (
      await q<{ id: string }>(
        `insert into "sagaflow"."saga_instances" (process_name, correlation_key, status, current_state, state,
                                                  created_at, updated_at, completed_at)
         values ('r45.proc', 'k', 'COMPLETED', 'Done', '{}'::jsonb, '2020-01-01Z', '2020-01-02Z', '2020-01-02Z')
         returning id::text as id`,
      )
    )[0]!.id;
    await q(
      `insert into "sagaflow"."process_transitions" (instance_id, process_name, from_state, to_state, message_id, message_type, detail, at)
       select $1::uuid, 'r45.proc', 'Open', 'Open', 'm-' || g, 'Tick', jsonb_build_object('blob', repeat('x', $2::int)),
              '2020-01-01Z'::timestamptz + g * interval '1 s'
         from generate_series(1, $3::int) g`,
      [instanceId, detailChars, transitions],
    );

    // Page 1 (50 rows of ~400 KB) has been read once its first row arrives; the client stops reading.
    const { res, chunks } = await openPausedAt(
      `${plane.url}/history/instances/${instanceId}`,
      cookie,
      '"transitions": [\n    {',
    );
    expect(res.statusCode).toBe(200);

    const report = await plane.engine.retention.prune({ olderThanSeconds: 86_400 });
    expect(report.deleted.process_transitions).toBe(transitions);

    const { body, broken } = await readRest(res, chunks);
    const doc = parsedOrNull(body);
    // The guarantee: a document that parses is the whole history; otherwise the transfer is broken.
    if (doc !== null) {
      expect.soft(broken).toBe(false);
      expect(doc.transitions).toHaveLength(transitions);
    } else {
      expect(broken).toBe(true);
    }
  }, 120_000);

  it("a run's download whose published outbox rows are pruned mid-section is complete or visibly broken, never valid and short", async () => {
    const q = plane.db.driver.query.bind(plane.db.driver);
    // A run finished yesterday (not prunable itself) whose outbox rows were published long ago.
    const runId = (
      await q<{ id: string }>(
        `insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input, created_at, updated_at, started_at, finished_at)
         values ('r45.flow', 1, 'Completed', '{}'::jsonb, '2020-01-01Z', now(), '2020-01-01Z', now())
         returning id::text as id`,
      )
    )[0]!.id;
    await q(
      `insert into "sagaflow"."outbox" (message_id, source_kind, source_id, type, destination, payload, status, published_at)
       select 'r45-' || g, 'flow', $1, 'Ship', 'q', jsonb_build_object('blob', repeat('y', $2::int)), 'Published',
              '2020-01-01Z'::timestamptz + g * interval '1 s'
         from generate_series(1, $3::int) g`,
      [runId, detailChars, transitions],
    );

    const { res, chunks } = await openPausedAt(`${plane.url}/history/runs/${runId}`, cookie, '"outbox": [\n    {');
    expect(res.statusCode).toBe(200);

    const report = await plane.engine.retention.prune({ olderThanSeconds: 86_400 });
    expect(report.deleted.outbox).toBe(transitions);
    expect(report.deleted.flow_runs).toBe(0);

    const { body, broken } = await readRest(res, chunks);
    const doc = parsedOrNull(body);
    if (doc !== null) {
      expect.soft(broken).toBe(false);
      expect(doc.outbox).toHaveLength(transitions);
    } else {
      expect(broken).toBe(true);
    }
  }, 120_000);
});
