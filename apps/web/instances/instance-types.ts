import type { inferRouterOutputs } from '@trpc/server';
import type { AppRouter } from '@sagaflow/control';

type Outputs = inferRouterOutputs<AppRouter>;

/** Shapes of what the control plane returns for instances, inferred from its router (types only). */
export type InstanceSummary = Outputs['instances']['page']['items'][number];
export type InstanceDetail = Outputs['instances']['get'];
export type InstanceTransition = InstanceDetail['history'][number];
export type InstanceOperatorCommand = InstanceDetail['operatorCommands'][number];
export type InstanceFailure = NonNullable<InstanceSummary['failure']>;
export type InstanceFailingTimeout = NonNullable<InstanceSummary['failingTimeout']>;
