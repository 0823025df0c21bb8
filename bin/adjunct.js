#!/usr/bin/env node
// Entry point of the adjunct CLI: runs the compiled CLI when built, the TypeScript sources through tsx otherwise.
// Without the V8 heap bounds of node-flags.js (and unless ADJUNCT_NO_REEXEC=1), it first re-executes itself with them,
// forwarding signals and the exit code; the child dies with its parent (IPC disconnect), as in a process group kill.
const fs = require('fs');
const path = require('path');
const { spawn } = require('child_process');
const { missingNodeFlags } = require('./node-flags');

const missing = process.env.ADJUNCT_NO_REEXEC === '1' ? [] : missingNodeFlags(process.execArgv, process.env.NODE_OPTIONS);
if (missing.length > 0) {
  const child = spawn(process.execPath, [...process.execArgv, ...missing, __filename, ...process.argv.slice(2)], {
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, ADJUNCT_NO_REEXEC: '1', ADJUNCT_REEXECED: '1' },
  });
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(sig, () => child.kill(sig));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 + (require('os').constants.signals[signal] || 0) : 1)));
} else {
  if (process.env.ADJUNCT_REEXECED === '1' && process.connected) {
    // The parent is only a signal relay: if it is gone (even by SIGKILL), go with it.
    process.on('disconnect', () => process.kill(process.pid, 'SIGKILL'));
    process.channel?.unref();
  }
  const compiled = path.join(__dirname, '..', 'dist', 'cli', 'main.js');
  if (fs.existsSync(compiled)) {
    require(compiled).main(process.argv).catch((e) => { console.error(e); process.exit(1); });
  } else {
    require('tsx/cjs');
    require('tsx/esm/api').register(); // the CLI's lazy `import()`s (e.g. the HTTP API) go through the ESM loader
    require(path.join(__dirname, '..', 'src', 'cli', 'main.ts')).main(process.argv).catch((e) => { console.error(e); process.exit(1); });
  }
}
