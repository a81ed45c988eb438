/**
 * The two ways the project's patches of kafkajs 2.2.4 (pinned exactly while they stand) install, each once: a method
 * on a prototype replaced by `wrap(original)` ({@link patchKafkajsMethod}; a kafkajs without the method fails loudly
 * instead of running unpatched), or a module's export replaced in the module cache before the kafkajs module that
 * binds it loads ({@link replaceKafkajsModule}).
 */
import { createRequire } from 'node:module';
import { KafkajsPatchError } from '../../../foundation/errors/index.js';

/** The kafkajs release every patch was written for (package.json pins it exactly; a unit test checks both). */
export const KAFKAJS_PATCHED_VERSION = '2.2.4';

type Method = (this: never, ...args: never[]) => unknown;

/** Whether `fn` is a patch installed under `tag` (a second install is then a no-op). */
const isPatch = (fn: unknown, tag: string): boolean =>
  (fn as Record<symbol, boolean> | undefined)?.[Symbol.for(tag)] === true;

/** `fn`, marked as the patch installed under `tag`. */
function marked<F extends Method>(fn: F, tag: string): F {
  (fn as unknown as Record<symbol, boolean>)[Symbol.for(tag)] = true;
  return fn;
}

/**
 * @param modulePath a kafkajs module exporting a class, e.g. `kafkajs/src/broker/index.js`
 * @param method the prototype method to replace
 * @param tag a `Symbol.for` name marking the installed function
 * @param why what the patch is for, in the error when kafkajs has no such method
 * @returns the installed function (this call's, or the one an earlier install put there)
 * @throws KafkajsPatchError when the module's class has no such method (a kafkajs other than 2.2.4)
 */
export function patchKafkajsMethod<F extends Method>(
  modulePath: string,
  method: string,
  tag: string,
  why: string,
  wrap: (original: F) => F,
): F {
  const require = createRequire(import.meta.url);
  const proto = (require(modulePath) as { prototype: Record<string, unknown> }).prototype;
  const original = proto[method];
  if (typeof original !== 'function')
    throw new KafkajsPatchError(
      `kafkajs ${modulePath} has no ${method}: ${why} cannot be installed (is kafkajs ${KAFKAJS_PATCHED_VERSION} installed?)`,
    );
  if (isPatch(original, tag)) return original as F;
  const installed = marked(wrap(original as F), tag);
  proto[method] = installed;
  return installed;
}

/**
 * Replaces the export of kafkajs module `modulePath` with `replace(original)` in this process's module cache, once,
 * provided `dependentPath` (the kafkajs module that takes the export when it loads) has not loaded yet.
 * @returns whether the replacement is in place (false: `dependentPath` loaded first and keeps kafkajs' own)
 */
export function replaceKafkajsModule<F extends Method>(
  modulePath: string,
  dependentPath: string,
  tag: string,
  replace: (original: F) => F,
): boolean {
  const require = createRequire(import.meta.url);
  const path = require.resolve(modulePath);
  const current = require(path) as F;
  if (isPatch(current, tag)) return true;
  if (require.cache[require.resolve(dependentPath)] !== undefined) return false;
  const cached = require.cache[path];
  if (cached === undefined) return false;
  cached.exports = marked(replace(current), tag);
  return true;
}
