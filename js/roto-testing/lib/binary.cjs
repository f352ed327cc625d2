'use strict';
/**
 * Which roto-server binary to run, found the way roto-pytest finds it: $ROTO_BINARY, else
 * target/release/roto-server in the working directory or one of its parents, else
 * roto-server on PATH. A test suite that finds none fails with a message naming ROTO_BINARY.
 */

const fs = require('node:fs');
const path = require('node:path');

const BINARY_NAME = 'roto-server';

/** The binary to run; throws an Error naming ROTO_BINARY when there is none. */
function findBinary({ cwd = process.cwd(), env = process.env } = {}) {
  const configured = env.ROTO_BINARY;
  if (configured) {
    if (!isExecutableFile(configured)) {
      throw new Error(`ROTO_BINARY=${configured} is not an executable file`);
    }
    return configured;
  }
  const found = releaseBinaryAbove(path.resolve(cwd)) ?? onPath(env.PATH ?? '');
  if (found) return found;
  throw new Error(
    'no roto-server binary: set ROTO_BINARY to its path, build it with ' +
      '`cargo build -p roto-server --release` (target/release/roto-server is looked for ' +
      `from ${cwd} upwards), or put roto-server on PATH`,
  );
}

function releaseBinaryAbove(directory) {
  for (let dir = directory; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'target', 'release', BINARY_NAME);
    if (isExecutableFile(candidate)) return candidate;
    if (path.dirname(dir) === dir) return undefined;
  }
}

function onPath(searchPath) {
  return searchPath
    .split(path.delimiter)
    .filter(Boolean)
    .map((dir) => path.join(dir, BINARY_NAME))
    .find(isExecutableFile);
}

function isExecutableFile(file) {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

module.exports = { findBinary };
