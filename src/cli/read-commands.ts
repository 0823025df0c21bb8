import { Command } from 'commander';

/** Registers status/lookup/reload/rollback/serve (implemented with the lookup library and the HTTP API). */
export function registerReadCommands(_program: Command): void {
  // Filled in by the read-side module.
}
