/** `log_level`: how much the service logs (JSON on stderr). */
import { section, type Infer } from '../setting';

export const loggingSchema = section({
  log_level: {
    doc: 'Log level of the JSON logs on stderr. `warn` keeps request logs out of the hot path.',
    format: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
    default: 'info',
    env: 'SIGNER_LOG_LEVEL',
  },
});

export type LogLevel = Infer<typeof loggingSchema>['log_level'];
