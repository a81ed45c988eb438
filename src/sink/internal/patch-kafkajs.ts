/**
 * Replaces a method on a prototype of this process's kafkajs with `wrap(original)`, once: the project's patches of
 * kafkajs 2.2.4 (pinned exactly while they stand) all install through this, so a second install is a no-op and a
 * kafkajs without the method fails loudly instead of running unpatched.
 */
import { createRequire } from 'node:module';

type Method = (this: never, ...args: never[]) => unknown;

/**
 * @param modulePath a kafkajs module exporting a class, e.g. `kafkajs/src/broker/index.js`
 * @param method the prototype method to replace
 * @param tag a `Symbol.for` name marking the installed function
 * @param why what the patch is for, in the error when kafkajs has no such method
 * @throws Error when the module's class has no such method (a kafkajs other than 2.2.4)
 */
export function patchKafkajsMethod<F extends Method>(
  modulePath: string,
  method: string,
  tag: string,
  why: string,
  wrap: (original: F) => F,
): void {
  const require = createRequire(import.meta.url);
  const proto = (require(modulePath) as { prototype: Record<string, unknown> }).prototype;
  const original = proto[method];
  if (typeof original !== 'function')
    throw new Error(
      `kafkajs ${modulePath} has no ${method}: ${why} cannot be installed (is kafkajs 2.2.4 installed?)`,
    );
  const marker = Symbol.for(tag);
  if ((original as unknown as Record<symbol, boolean>)[marker] === true) return;
  const patched = wrap(original as F);
  (patched as unknown as Record<symbol, boolean>)[marker] = true;
  proto[method] = patched;
}
