/** gamedata-pipeline: package entry. The client is also exported on its own as `gamedata-pipeline/client`. */
export * from './errors.js';
export { models, checkRecord, RESOURCES, RESOURCE_INFO } from './models/index.js';
export type * from './models/types.js';
