import type { HttpStarter } from '../cli/run-command';

/** Starts the HTTP API next to a worker (placeholder until the read side lands). */
export const httpStarter: HttpStarter = async () => undefined;
