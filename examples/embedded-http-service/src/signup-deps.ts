import type { Engine, FlowDefinition } from '@sagaflow/engine';
import type { SignupInput, SignupOutput } from './signup-saga.ts';

/** What the request handlers need: the engine, the flow they start, and the service's settings. */
export interface SignupDeps {
  engine: Engine;
  signupFlow: FlowDefinition<SignupInput, SignupOutput>;
  verifyWithinSeconds: number;
}

/** A handler's answer; the request handler writes it as JSON. */
export interface JsonReply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}
