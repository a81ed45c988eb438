// `npx tsx scripts/long-functions.ts [--max N]`: lists every function in src/ longer than the limit
// (100 lines by default), longest first, and exits 1 when any is over it that the allow-list below does not name.
//
// A function's length is counted from the line its `function` keyword, method name or arrow parameters start on
// (modifiers such as `export async` included) to the line of its closing brace, both included. Every kind counts:
// declarations, function expressions, arrows, methods, constructors and accessors; a nested function is counted on
// its own and inside its parent. Names: a declaration or method by its name, an arrow or function expression by the
// variable, property or call it is assigned or passed to, prefixed by its enclosing named functions
// (`createX > start`), so a line of the output points at one place.
//
// Parsed with the TypeScript compiler API (syntax only, no type checking), so it runs in about a second.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/**
 * The default limit: issue 49's "No function over 100 lines in src/ (the metrics table excepted)" (issue 33 had set
 * 120).
 */
const DEFAULT_MAX_LINES = 100;

/**
 * Functions allowed over the limit, keyed `path:name` (path relative to the repository root), each with why.
 * Only tables belong here: a function whose length is one definition per line, with no control flow to split.
 */
const ALLOWED: Readonly<Record<string, string>> = {
  'src/foundation/metrics/pipeline-metrics.ts:createPipelineMetrics':
    'a table: one prom-client metric definition (name, help, labels, buckets) per entry and no control flow; ' +
    'splitting it would scatter the metric names operators grep for across files',
};

/** One function found in a file. */
interface FunctionLength {
  readonly path: string;
  readonly name: string;
  readonly line: number;
  readonly lines: number;
}

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Every .ts file under `dir`, recursively, in a stable order. */
function listTsFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return listTsFiles(path);
      return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : [];
    });
}

/** The text of a property or binding name, or undefined for computed and destructured names. */
function nameText(name: ts.Node | undefined): string | undefined {
  if (name === undefined) return undefined;
  if (ts.isIdentifier(name) || ts.isPrivateIdentifier(name) || ts.isStringLiteral(name)) return name.text;
  if (ts.isNumericLiteral(name)) return name.text;
  return undefined;
}

/** The name a function node goes by in its own scope: its declared name, or what it is assigned or passed to. */
function ownName(node: ts.FunctionLikeDeclaration): string {
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const declared = nameText(node.name);
  if (declared !== undefined) {
    if (ts.isGetAccessorDeclaration(node)) return `get ${declared}`;
    if (ts.isSetAccessorDeclaration(node)) return `set ${declared}`;
    return declared;
  }
  let parent = node.parent;
  while (
    ts.isParenthesizedExpression(parent) ||
    ts.isAsExpression(parent) ||
    ts.isSatisfiesExpression(parent)
  ) {
    parent = parent.parent;
  }
  if (
    ts.isVariableDeclaration(parent) ||
    ts.isPropertyAssignment(parent) ||
    ts.isPropertyDeclaration(parent)
  ) {
    return nameText(parent.name) ?? '<anonymous>';
  }
  if (ts.isBinaryExpression(parent) && parent.operatorToken.kind === ts.SyntaxKind.EqualsToken) {
    return parent.left.getText();
  }
  if (ts.isCallExpression(parent) || ts.isNewExpression(parent)) {
    const callee = parent.expression.getText().replace(/\s+/g, '');
    return `<callback of ${callee.length > 40 ? `${callee.slice(0, 40)}…` : callee}>`;
  }
  return '<anonymous>';
}

/** Every function in one source file with its length in lines. */
function measureFile(path: string): FunctionLength[] {
  const text = readFileSync(path, 'utf8');
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const relativePath = relative(root, path);
  const found: FunctionLength[] = [];

  const visit = (node: ts.Node, scope: readonly string[]): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const fn = node;
      const name = [...scope, ownName(fn)];
      const start = source.getLineAndCharacterOfPosition(fn.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(fn.getEnd()).line;
      found.push({ path: relativePath, name: name.join(' > '), line: start + 1, lines: end - start + 1 });
      ts.forEachChild(node, (child) => visit(child, name));
      return;
    }
    ts.forEachChild(node, (child) => visit(child, scope));
  };
  visit(source, []);
  return found;
}

/** Reads `--max N` (the limit in lines; allowed functions over it are printed too, marked). */
function parseArgs(argv: readonly string[]): { maxLines: number } {
  let maxLines = DEFAULT_MAX_LINES;
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === '--max') {
      const value = Number(argv[i + 1]);
      if (!Number.isInteger(value) || value < 1) {
        throw new Error(`--max must be a positive integer, got ${String(argv[i + 1])}`);
      }
      maxLines = value;
      i += 1;
    } else {
      throw new Error(`unknown argument ${String(arg)} (usage: long-functions.ts [--max N])`);
    }
  }
  return { maxLines };
}

function main(): number {
  const { maxLines } = parseArgs(process.argv.slice(2));
  const long = listTsFiles(join(root, 'src'))
    .flatMap(measureFile)
    .filter((fn) => fn.lines > maxLines)
    .sort((a, b) => b.lines - a.lines || a.path.localeCompare(b.path) || a.line - b.line);

  let failing = 0;
  const lines: string[] = [];
  for (const fn of long) {
    // The allow-list names a function by its own name (the last part), so a nested one is never allowed by accident.
    const reason = fn.name.includes(' > ') ? undefined : ALLOWED[`${fn.path}:${fn.name}`];
    const where = `${fn.path}:${fn.line}`;
    if (reason === undefined) failing += 1;
    lines.push(
      `${String(fn.lines).padStart(4)}  ${fn.name}  ${where}${reason === undefined ? '' : `  (allowed: ${reason})`}`,
    );
  }
  lines.push(
    `${long.length} function(s) over ${maxLines} lines in src/, ${failing} not on the allow-list` +
      (failing > 0 ? ' (split them, or add a table to ALLOWED in scripts/long-functions.ts with why)' : ''),
  );
  // One write: a reader that stops early (`| head`) closes the pipe without an EPIPE for the lines after.
  process.stdout.on('error', () => undefined);
  process.stdout.write(`${lines.join('\n')}\n`);
  return failing > 0 ? 1 : 0;
}

process.exitCode = main();
