/** `article.*`: one article (full or lite) and the paginated feed with its filters. */
import { indexView, tableView, type RowView } from '../ordered-table.js';
import type { World } from '../world.js';
import { ROUTE_INPUTS } from './inputs.js';
import { emptyView, HOUR, type Paging } from './paging.js';
import { baseProcedure, notFound, t } from './procedure.js';

export function createArticleRoutes(world: World, paging: Paging) {
  return t.router({
    getArticleById: baseProcedure.input(ROUTE_INPUTS.articleById).query(({ input, ctx }) => {
      const table = world.store('articles').table;
      const row = table.find(input.articleId);
      if (row === undefined) throw notFound('Article', input.articleId);
      if (ctx.settings.countArticleViews) world.countView(row);
      return paging.serve('articles', row, world.store('articles').build(row, 'full'), ctx.settings);
    }),
    getArticleLiteById: baseProcedure.input(ROUTE_INPUTS.articleById).query(({ input, ctx }) => {
      const row = world.store('articles').table.find(input.articleId);
      if (row === undefined) throw notFound('Article', input.articleId);
      return paging.serve('articles', row, world.store('articles').build(row, 'lite'), ctx.settings);
    }),
    getArticlesPaginated: baseProcedure
      .input(ROUTE_INPUTS.articlesPaginated)
      .query(async ({ input, ctx }) => {
        const table = world.store('articles').table;
        const now = world.nowMs;
        let view: RowView = tableView(table);
        let minTimeMs: number | undefined;
        let author: number | undefined;
        let country: number | undefined;
        const user = input.userId === undefined ? undefined : paging.userIdent(input.userId);
        switch (input.type) {
          case 'daily':
            minTimeMs = now - 24 * HOUR;
            break;
          case 'weekly':
            minTimeMs = now - 7 * 24 * HOUR;
            break;
          case 'my':
            // The caller's own articles: the simulator takes the caller from userId (no sessions here).
            if (user === undefined) view = emptyView;
            break;
          case 'subscriptions':
            // The feed of the country the user follows: simulated as the user's own country.
            if (user === undefined) view = emptyView;
            else {
              const users = world.store('users').table;
              const userRow = users.rowOf(user) as number;
              country = world.countryIndex(String(world.store('users').build(userRow, 'lite')['country']));
            }
            break;
          default:
            break;
        }
        if (input.type !== 'subscriptions' && input.userId !== undefined) {
          if (user === undefined) view = emptyView;
          else author = user;
        }
        if (view !== emptyView) {
          if (author !== undefined) view = indexView(table, 'author', author);
          else if (country !== undefined) view = indexView(table, 'country', country);
        }
        const categories = input.categories === undefined ? undefined : new Set(input.categories);
        const languages = input.languages === undefined ? undefined : new Set(input.languages);
        const minScore = input.type === 'top' ? 10 : input.positiveScoreOnly === true ? 1 : undefined;
        const predicate =
          categories === undefined && languages === undefined && minScore === undefined
            ? undefined
            : (row: number): boolean => {
                const meta = world.articleMeta(row);
                return (
                  (categories === undefined || categories.has(meta.category)) &&
                  (languages === undefined || languages.has(meta.language)) &&
                  (minScore === undefined || meta.score >= minScore)
                );
              };
        await ctx.filteredCall(ctx.settings.latency.filteredMs);
        return paging.page({
          resource: 'articles',
          view,
          limit: input.limit ?? 10,
          cursor: input.cursor,
          minTimeMs,
          predicate,
          variant: 'feed',
          settings: ctx.settings,
        });
      }),
  });
}
