#!/usr/bin/env node
// Entry point of the adjunct CLI: runs the compiled CLI when built, the TypeScript sources through tsx otherwise.
const fs = require('fs');
const path = require('path');
const compiled = path.join(__dirname, '..', 'dist', 'cli', 'main.js');
if (fs.existsSync(compiled)) {
  require(compiled).main(process.argv).catch((e) => { console.error(e); process.exit(1); });
} else {
  require('tsx/cjs');
  require(path.join(__dirname, '..', 'src', 'cli', 'main.ts')).main(process.argv).catch((e) => { console.error(e); process.exit(1); });
}
