import type { inferRouterOutputs } from '@trpc/server';
import type { AppRouter } from '@sagaflow/control';

type Outputs = inferRouterOutputs<AppRouter>;

/** Shapes of what the control plane returns, inferred from its router (types only). */
export type RunSummary = Outputs['runs']['page']['items'][number];
export type RunsPage = Outputs['runs']['page'];
export type InstancesPage = Outputs['instances']['page'];
export type RunDetail = Outputs['runs']['get'];
export type StepRow = RunDetail['actions'][number];
export type FlowEventRow = RunDetail['events'][number];
export type CompensationRow = RunDetail['compensations'][number];
export type AnomalyRow = RunDetail['anomalies'][number];
export type Overview = Outputs['overview']['get'];
export type Series = Outputs['series']['get'];
export type AnomalyEntry = Outputs['anomalies']['page']['items'][number];
export type AuditEntry = Outputs['audit']['page']['items'][number];
export type Definitions = Outputs['definitions']['list'];
export type ApprovalRow = Outputs['approvals']['list']['items'][number];
export type ApprovalPolicyView = Outputs['approvalPolicy']['get'];
export type StartableFlow = Outputs['runs']['flows'][number];
export type ActionSchemas = Outputs['runs']['actions'][number];
export type RunChanges = Outputs['runs']['changes'];
export type StepsPage = Outputs['runs']['steps'];
export type EventsPage = Outputs['runs']['events'];
export type CompensationsPage = Outputs['runs']['compensations'];
export type TransitionsPage = Outputs['instances']['transitions'];
export type OperatorRow = Outputs['operators']['list'][number];
/** What `repairs.keyUse` answers about an idempotency key (ADR 0120 addendum). */
export type KeyUse = Outputs['repairs']['keyUse'];
