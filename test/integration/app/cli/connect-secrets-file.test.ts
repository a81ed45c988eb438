/**
 * Issue 48, item 9: `gamedata connect secrets-file --output <path>` writes a 0600 temporary file (O_EXCL) and renames
 * it into place: never a moment with the secrets in a file others may read, and never through a symlink planted at
 * the path (the link is replaced, its target untouched). And a password in WAREHOUSE_URL's query (`?password=`,
 * `sslpassword=`), which would land inline in Connect's config, is refused in one line.
 */
import { spawn } from 'node:child_process';
import {
  lstatSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../..', import.meta.url));

function cli(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/app/cli/main.ts', ...args], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    child.once('exit', (code) => resolve({ code, out }));
  });
}

const env = (warehouseUrl: string): NodeJS.ProcessEnv => ({
  ...process.env,
  WAREHOUSE_URL: warehouseUrl,
  CONNECT_URL: 'http://127.0.0.1:1',
  GAMEDATA_CONNECT_SECRETS_FILE: '/etc/connect/gamedata.properties',
});

describe('connect secrets-file (issue 48, item 9)', () => {
  it('replaces a symlink at --output (its target untouched) with a 0600 file; no temporary file is left', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'secrets-file-'));
    const target = join(dir, 'elsewhere.txt');
    writeFileSync(target, 'not yours\n', { mode: 0o644 });
    const output = join(dir, 'gamedata.properties');
    symlinkSync(target, output);
    const run = await cli(
      ['connect', 'secrets-file', '--output', output],
      env('postgresql://wh:s3cret-pw@db:5432/wh'),
    );
    expect(run.code, run.out).toBe(0);
    expect(readFileSync(target, 'utf8')).toBe('not yours\n');
    expect(lstatSync(output).isSymbolicLink()).toBe(false);
    expect(statSync(output).mode & 0o777).toBe(0o600);
    expect(readFileSync(output, 'utf8')).toContain('warehouse.password=s3cret-pw');
    expect(readdirSync(dir).sort()).toEqual(['elsewhere.txt', 'gamedata.properties']);
  }, 30_000);

  it('an existing 0644 file at --output ends 0600 with the new content', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'secrets-file-'));
    const output = join(dir, 'gamedata.properties');
    writeFileSync(output, 'old\n', { mode: 0o644 });
    const run = await cli(['connect', 'secrets-file', '--output', output], env('postgresql://wh:pw2@db/wh'));
    expect(run.code, run.out).toBe(0);
    expect(statSync(output).mode & 0o777).toBe(0o600);
    expect(readFileSync(output, 'utf8')).toContain('warehouse.password=pw2');
  }, 30_000);

  it.each(['password', 'sslpassword', 'PASSWORD'])(
    'WAREHOUSE_URL with ?%s= is refused in one line',
    async (key) => {
      const dir = mkdtempSync(join(tmpdir(), 'secrets-file-'));
      const run = await cli(
        ['connect', 'secrets-file', '--output', join(dir, 'x.properties')],
        env(`postgresql://wh@db/wh?sslmode=require&${key}=hunter2-in-query`),
      );
      expect(run.code).toBe(1);
      const lines = run.out.split('\n').filter((l) => l.trim() !== '');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        new RegExp(`^gamedata: ConfigError: WAREHOUSE_URL carries a secret in its query \\(${key}=\\)`),
      );
      expect(run.out).not.toContain('hunter2-in-query');
    },
    30_000,
  );
});
