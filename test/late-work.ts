/**
 * Work that outlived its test file. When code runs after a file's jest environment is torn down (a timer, a client
 * reconnecting, a lazy `require`), jest prints "...after the Jest environment has been torn down" somewhere in the middle
 * of the output and sets process.exitCode = 1: the run fails at the end with every test passed and no reason in sight.
 * The globalSetup records those messages; the exit check repeats them at the end of the run.
 */
const LATE_WORK = Symbol.for('adjunct.test.lateWork');
const TORN_DOWN = /after the Jest environment has been torn down/;
const KEPT = 5;

/** The messages recorded so far, shared by every globalSetup/globalTeardown of the jest process. */
function recorded(): string[] {
  const g = globalThis as unknown as Record<symbol, string[] | undefined>;
  return (g[LATE_WORK] ??= []);
}

/** Starts recording jest's "torn down" messages in the jest process (idempotent). */
export function recordLateWork(): void {
  const g = globalThis as unknown as Record<symbol, unknown>;
  if (g[LATE_WORK]) return;
  const seen = recorded();
  const error = console.error.bind(console);
  console.error = (...args: unknown[]) => {
    const text = args.map(String).join(' ');
    if (TORN_DOWN.test(text) && seen.length < KEPT) seen.push(text.trim());
    error(...args);
  };
}

/** The recorded messages (at most five), one block each, or an empty string when there were none. */
export function describeLateWork(): string {
  return recorded().join('\n\n');
}
