// The type of wing-doors.mjs (a plain Node module, outside the TypeScript project), for its unit test.
import type { Rule } from 'eslint';

declare const wingDoors: Rule.RuleModule;
export default wingDoors;
