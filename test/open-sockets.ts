/**
 * Where a socket left open by a test run came from. `npm test` runs every file in one process (--runInBand), so a
 * socket a test or the code under test never closed keeps jest alive; the exit check names it with the stack that
 * opened it, its peer and its state, which `process.getActiveResourcesInfo()` alone cannot (it gives types only).
 */
import net from 'node:net';

const ORIGIN = Symbol.for('adjunct.test.socketOrigin');
const ORIGIN_FILE = Symbol.for('adjunct.test.socketOriginFile');
const REPORTED = Symbol.for('adjunct.test.socketLeftOpenReported');
const PATCHED = Symbol.for('adjunct.test.socketOriginsRecorded');
const CURRENT_FILE = Symbol.for('adjunct.test.currentFile');
const STACK_FRAMES = 40;

/** State shared by the jest process and its test sandboxes: core modules are the same objects in both. */
const shared = net as unknown as Record<symbol, string | undefined>;

/** Names the test file now running (undefined between files), so a socket's origin says which file opened it. */
export function noteTestFile(file: string | undefined): void {
  shared[CURRENT_FILE] = file;
}

type Connect = (this: net.Socket, ...args: unknown[]) => net.Socket;

/** Records the stack of every `net.Socket#connect` in this process from now on (idempotent; core modules are shared with the test sandboxes). */
export function recordSocketOrigins(): void {
  const proto = net.Socket.prototype as unknown as Record<symbol, unknown> & { connect: Connect };
  if (proto[PATCHED]) return;
  proto[PATCHED] = true;
  const connect = proto.connect;
  proto.connect = function recordedConnect(this: net.Socket, ...args: unknown[]): net.Socket {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = STACK_FRAMES;
    const origin = `while ${shared[CURRENT_FILE] ?? '(no test file)'} ran: ${new Error('socket opened').stack ?? ''}`;
    Error.stackTraceLimit = limit;
    (this as unknown as Record<symbol, string>)[ORIGIN] = origin;
    (this as unknown as Record<symbol, string | undefined>)[ORIGIN_FILE] = shared[CURRENT_FILE];
    return connect.apply(this, args);
  };
}

/** The process's open TCP client sockets. */
function openSockets(): net.Socket[] {
  const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
  return handles.filter(
    (h): h is net.Socket => h instanceof net.Socket && (h as unknown as { _handle?: object })._handle?.constructor.name === 'TCP',
  );
}

/**
 * Writes to stderr, once per socket, every socket still open that an earlier test file opened: work that outlives its
 * file can run after that file's environment is torn down, where jest fails the whole run (process.exitCode = 1).
 */
export function reportSocketsLeftOpen(current: string | undefined): void {
  for (const s of openSockets()) {
    const tagged = s as unknown as Record<symbol, string | boolean | undefined>;
    const file = tagged[ORIGIN_FILE];
    if (file === undefined || file === current || tagged[REPORTED] || s.destroyed) continue;
    tagged[REPORTED] = true;
    process.stderr.write(
      `[open-sockets] a socket opened by ${String(file)} is still open (${s.connecting ? 'connecting' : `${s.remoteAddress}:${s.remotePort}`}) as ${current ?? '(none)'} starts\n`,
    );
  }
}

/** One line per open socket (peer, state, listeners) followed by the stack that opened it, when recorded. */
export function describeOpenSockets(): string {
  return openSockets()
    .map((s) => {
      const state = {
        local: `${s.localAddress}:${s.localPort}`,
        remote: `${s.remoteAddress}:${s.remotePort}`,
        connecting: s.connecting,
        destroyed: s.destroyed,
        readyState: s.readyState,
        timeout: s.timeout,
        ref: (s as unknown as { _handle?: { hasRef?(): boolean } })._handle?.hasRef?.(),
        listeners: Object.fromEntries(
          ['data', 'close', 'end', 'error', 'timeout'].map((e) => [e, s.listeners(e).map((f) => f.name || '(anonymous)')]),
        ),
      };
      const origin = (s as unknown as Record<symbol, string | undefined>)[ORIGIN];
      return `socket ${JSON.stringify(state)}\n${origin ?? '(opened before recording started, or a server-side socket)'}`;
    })
    .join('\n');
}
