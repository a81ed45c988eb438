// A fresh copy of a kafkajs module, as kafkajs ships it whatever this process's patches installed (they replace
// prototype methods and module-cache entries): the tests of src/output/kafka/kafkajs-patches/ first show the bug on it.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** The module at `modulePath` (e.g. `kafkajs/src/cluster/index.js`), loaded anew; the cached copy is put back. */
export function freshKafkajsModule<T>(modulePath: string): T {
  const path = require.resolve(modulePath);
  const cached = require.cache[path];
  delete require.cache[path];
  const fresh = require(path) as T;
  if (cached === undefined) delete require.cache[path];
  else require.cache[path] = cached;
  return fresh;
}
