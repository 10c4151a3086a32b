import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';
import type { ControlEnv } from '../env.ts';
import { quietExpectedErrors } from './quiet-expected-errors.ts';

/**
 * The control plane's logger. `LOG_FORMAT=auto` writes human-readable lines when stdout is a terminal
 * outside production (someone is reading it: `npm start`) and JSON lines otherwise (a collector is
 * reading it); `json` and `pretty` force one. The pretty stream writes synchronously, so nothing
 * is lost on exit.
 */
export function createLogger(
  env: Pick<ControlEnv, 'LOG_LEVEL' | 'LOG_FORMAT' | 'NODE_ENV'>,
  stdoutIsTTY: boolean,
): Logger {
  const options = { level: env.LOG_LEVEL, name: 'sagaflow-control', hooks: { logMethod: quietExpectedErrors } };
  const terminal = stdoutIsTTY && env.NODE_ENV !== 'production';
  if (env.LOG_FORMAT === 'json' || (env.LOG_FORMAT === 'auto' && !terminal)) return pino(options);
  return pino(
    options,
    pretty({
      colorize: terminal,
      sync: true,
      translateTime: 'SYS:HH:MM:ss',
      ignore: 'pid,hostname,name',
      singleLine: true,
    }),
  );
}
