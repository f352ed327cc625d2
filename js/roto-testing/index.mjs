// The ES module entry: the CommonJS implementation's exports, so that `import` and
// `require` in one process share one set of running servers.
import roto from './index.cjs';

export const { RotoServer, RotoClient, findBinary } = roto;
