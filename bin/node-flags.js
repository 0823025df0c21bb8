// Default V8 heap bounds of the adjunct process (peak RSS ≤ 256 MB at 1M records): applied by bin/adjunct.js and the
// bench's worker child unless the same flags are already set in NODE_OPTIONS or on the node command line.
const DEFAULT_NODE_FLAGS = ['--max-old-space-size=128', '--max-semi-space-size=8'];

/** The default flags that neither execArgv nor NODE_OPTIONS sets. */
function missingNodeFlags(execArgv, nodeOptions) {
  const given = [...execArgv, ...(nodeOptions || '').split(/\s+/)].map((a) => a.split('=')[0].replace(/_/g, '-'));
  return DEFAULT_NODE_FLAGS.filter((f) => !given.includes(f.split('=')[0]));
}

module.exports = { DEFAULT_NODE_FLAGS, missingNodeFlags };
