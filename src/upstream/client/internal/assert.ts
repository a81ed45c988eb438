import { ValidationError } from '../../../foundation/errors/index.js';
import { checkRecord } from '../../../foundation/models/index.js';
import type { ModelDef } from '../../../foundation/models/index.js';

/** Checks a record; throws a ValidationError naming the first bad path (and how many more there are). */
export function assertRecordLike(model: ModelDef, value: unknown, where: string, rootPath = ''): void {
  const issues = checkRecord(model, value, rootPath);
  const first = issues[0];
  if (first)
    throw new ValidationError(
      `${where}: ${first.path || '(root)'} ${first.message}${issues.length > 1 ? ` (+${issues.length - 1} more)` : ''}`,
      first.path,
    );
}
