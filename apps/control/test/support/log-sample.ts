// A child process for src/logging/create-logger.test.ts: the control plane's logger, set up as main.ts sets it up
// (from the environment, and whether stdout is a terminal), logs one ordinary line and the engine's
// warning about a demo poison note, through a child logger as the engine gets it.
import { PoisonNoteError } from '@sagaflow/engine/testing';
import { parseEnv } from '../../src/env.ts';
import { createLogger } from '../../src/logging/create-logger.ts';

const logger = createLogger(parseEnv(process.env), process.stdout.isTTY);
logger.info({ url: 'http://127.0.0.1:4000' }, 'control plane listening');
logger
  .child({ component: 'engine' })
  .warn(
    { err: new PoisonNoteError('cannot handle note "poison"'), messageId: 'note-1' },
    'process instance quarantined',
  );
logger.warn({ err: new Error('disk full') }, 'outbox publish failed');
