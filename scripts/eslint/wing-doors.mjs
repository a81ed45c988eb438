// ESLint rule `local/wing-doors` (issue 49, "one door per folder"): an import whose relative specifier resolves into
// another wing of src/ must name that folder's door, `<wing>/<folder>/index.js` (for a file directly in a wing,
// `<wing>/index.js`). Imports inside one wing are not restricted, and files directly in src/ (the package root,
// src/index.ts) are exempt as importers. Covers `import ... from`, `import type`, side-effect `import '...'`,
// `export ... from`, `export * from`, dynamic `import('...')` and type-position `import('...')`. The autofix rewrites
// the specifier to the door (a correct relative path) when the door's index.ts exists; whether the door exports the
// imported names is tsc's to say (the barrel then gains the export). Syntax and the file system only: no type
// information, no resolver.
import { existsSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

/** `path`'s segments relative to `srcDir`, or undefined when it is not inside it. */
function segmentsIn(srcDir, path) {
  const rel = relative(srcDir, path);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return undefined;
  return rel.split(sep);
}

/**
 * The door of a target inside a wing (`segments` relative to src/): its folder's `index.js` (a file directly in a
 * wing: the wing's), as segments; and whether the target already is that door.
 */
function doorOf(segments) {
  const door = segments.length === 2 ? [segments[0], 'index.js'] : [segments[0], segments[1], 'index.js'];
  const isDoor = segments.length === door.length && segments.at(-1) === 'index.js';
  return { door, isDoor };
}

/** The source string node of an import-like node, when it is a plain string (a literal, a template without `${}`). */
function sourceOf(node) {
  if (node === null || node === undefined) return undefined;
  if (node.type === 'Literal' && typeof node.value === 'string') return { node, value: node.value };
  if (node.type === 'TemplateLiteral' && node.expressions.length === 0 && node.quasis.length === 1)
    return { node, value: node.quasis[0].value.cooked };
  return undefined;
}

/** @type {import('eslint').Rule.RuleModule} */
const wingDoors = {
  meta: {
    type: 'problem',
    fixable: 'code',
    docs: { description: "Imports from another wing of src/ go through the target folder's index.js" },
    schema: [
      {
        type: 'object',
        properties: { srcDir: { type: 'string', description: 'the src/ folder (default: <cwd>/src)' } },
        additionalProperties: false,
      },
    ],
    messages: {
      door: "'{{specifier}}' reaches past the door of src/{{folder}}/ from another wing: import '{{door}}'.",
      noDoor:
        "'{{specifier}}' reaches into src/{{folder}}/ from another wing, which has no index.ts: add one (or make the file a folder with an index.ts) and import it.",
    },
  },
  create(context) {
    const srcDir = resolve(context.cwd, context.options[0]?.srcDir ?? 'src');
    const filename = context.physicalFilename ?? context.filename;
    const from = isAbsolute(filename) ? segmentsIn(srcDir, filename) : undefined;
    if (from === undefined || from.length < 2) return {}; // outside src/, or directly in it (the package root)

    function check(sourceNode) {
      const source = sourceOf(sourceNode);
      if (source === undefined || !source.value.startsWith('.')) return;
      const target = segmentsIn(srcDir, resolve(dirname(filename), source.value));
      if (target === undefined || target.length < 2 || target[0] === from[0]) return; // not another wing
      const { door, isDoor } = doorOf(target);
      if (isDoor) return;
      const folder = door.slice(0, -1).join('/');
      const doorPath = join(srcDir, ...door);
      if (!existsSync(doorPath.replace(/\.js$/, '.ts'))) {
        context.report({ node: source.node, messageId: 'noDoor', data: { specifier: source.value, folder } });
        return;
      }
      let specifier = relative(dirname(filename), doorPath).split(sep).join('/');
      if (!specifier.startsWith('.')) specifier = `./${specifier}`;
      context.report({
        node: source.node,
        messageId: 'door',
        data: { specifier: source.value, folder, door: specifier },
        fix: (fixer) => {
          const quote = context.sourceCode.getText(source.node)[0];
          return fixer.replaceText(source.node, `${quote}${specifier}${quote}`);
        },
      });
    }

    return {
      ImportDeclaration: (node) => check(node.source),
      ExportNamedDeclaration: (node) => check(node.source),
      ExportAllDeclaration: (node) => check(node.source),
      ImportExpression: (node) => check(node.source),
      TSImportType: (node) => check(node.source ?? node.argument?.literal),
    };
  },
};

export default wingDoors;
