'use client';

import { useState } from 'react';
import type { StepRow as Step } from '@/trpc/api-types';
import { countValueSteps, stepLines } from './step-lines';
import { StepRow } from './step-row';
import { ScrollBox } from '@/ui/scroll-box';

const columns = 9;

/**
 * The run's steps in order. Recorded values are hidden behind a toggle (they are replay bookkeeping,
 * rarely what an operator is after); steps of one parallel block sit under a shared header.
 */
export function StepsTable({
  steps,
  childRunIds,
  now,
  runEndedAt,
}: {
  steps: Step[];
  childRunIds: ReadonlyMap<number, string>;
  now: number;
  runEndedAt: string | null;
}) {
  const [showValues, setShowValues] = useState(false);
  const valueCount = countValueSteps(steps);
  if (steps.length === 0) return <p className="empty">No steps recorded yet.</p>;
  return (
    <>
      {valueCount > 0 ? (
        <label className="toggle" data-testid="show-values">
          <input type="checkbox" checked={showValues} onChange={(e) => setShowValues(e.target.checked)} /> Show recorded
          values ({valueCount} {valueCount === 1 ? 'step' : 'steps'} holding a ctx.now(), random() or uuid() result)
        </label>
      ) : null}
      <ScrollBox label="Steps">
        <table className="table" data-testid="steps-table">
          <thead>
            <tr>
              <th>#</th>
              <th>Kind</th>
              <th>Step</th>
              <th>Status</th>
              <th className="num">Attempts</th>
              <th>Started</th>
              <th>Finished</th>
              <th className="num">Took</th>
              <th>Result</th>
            </tr>
          </thead>
          <tbody>
            {stepLines(steps, showValues).map((line) =>
              line.type === 'block' ? (
                <tr key={`block-${line.block}-${line.first}`} className="block-row" data-testid="parallel-block">
                  <td colSpan={columns}>
                    Parallel block · steps {line.first}–{line.last} ran side by side
                  </td>
                </tr>
              ) : (
                <StepRow
                  key={line.step.id}
                  step={line.step}
                  inBlock={line.inBlock}
                  now={now}
                  runEndedAt={runEndedAt}
                  childRunId={childRunIds.get(line.step.sequence)}
                />
              ),
            )}
          </tbody>
        </table>
      </ScrollBox>
    </>
  );
}
