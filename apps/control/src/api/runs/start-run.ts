import { z } from 'zod';
import type { Json } from '@sagaflow/engine';
import { recordOperatorAction } from '../audit/record-operator-action.ts';
import { operatorProcedure } from '../trpc.ts';

/**
 * The flow's input, as JSON.parse read it, passed on as it is (only a missing one is refused here):
 * the engine's own walk (`assertStorableJson`, ADR 0013) refuses what jsonb cannot hold and nesting
 * past `limits.json_depth`, naming the path and the limit. It is iterative; a recursive schema here
 * overflowed the stack on input nested 100,000 deep, a 400 saying "Maximum call stack size exceeded"
 * (review 31). Typed `ZodType<Json>` so callers may still pass any value (the console's form does).
 */
const json: z.ZodType<Json> = z.custom<Json>((value) => value !== undefined, {
  message: 'required: the flow input, as JSON',
});

export const startRun = operatorProcedure
  .input(
    z
      .object({
        flowName: z.string().min(1).max(200),
        input: json,
        businessKey: z.string().min(1).max(200).optional(),
        tags: z.array(z.string().min(1).max(100)).max(20).optional(),
      })
      .strict(),
  )
  .mutation(async ({ ctx, input }) => {
    // Who started the run is a row of the audit trail (review 31), committed with the run (ADR 0107).
    return ctx.engine.startFlow(input.flowName, input.input, {
      ...(input.businessKey ? { businessKey: input.businessKey } : {}),
      ...(input.tags ? { tags: input.tags } : {}),
      audit: (tx, started) =>
        recordOperatorAction(ctx, tx, {
          action: 'run_started',
          targetType: 'run',
          targetId: started.runId,
          outcome: 'succeeded',
          details: { flow: input.flowName, ...(input.businessKey ? { businessKey: input.businessKey } : {}) },
        }),
    });
  });
