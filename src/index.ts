/** gamedata-pipeline: package entry. The client is also exported on its own as `gamedata-pipeline/client`. */
export * from './foundation/errors/index.js';
export { models, checkRecord, RESOURCES, RESOURCE_INFO } from './foundation/models/index.js';
export type * from './foundation/models/types.js';
