/** Articles: text and stats from the article's stream; score and views move with versions and counted views. */
import { Article, ArticleLite } from '../../../src/foundation/models/catalogue.js';
import { STREAM } from '../generation/draws.js';
import type { WorldData } from '../generation/generate-world.js';
import { isoString } from '../internal/iso-string.js';
import { createRng, hash32 } from '../internal/prng.js';
import { ARTICLE_CATEGORIES, ARTICLE_TYPES, LANGUAGES, WORDS } from '../vocab.js';
import { pickFields, type ApiRecord, type RecordBuilder } from './record-variant.js';

const articleLiteKeys = ['_id', ...Object.keys(ArticleLite.fields), '__v'];
const articleLiteKeysWithoutContent = articleLiteKeys.filter((k) => k !== 'content');
const articleFullKeys = ['_id', ...Object.keys(Article.fields), '__v'];

export function createArticleBuilder(data: WorldData): RecordBuilder {
  const { seed, versions, articleViews, population } = data;
  const {
    table: articles,
    author: articleAuthor,
    category,
    language,
    score: articleScore,
    created,
  } = data.articles;
  const { userCountry, countryIds, userId } = population;
  const r = createRng(0);
  return (row, variant = 'feed') => {
    const ident = articles.ident(row);
    const version = versions.articles.get(ident);
    const views = articleViews.get(ident) ?? 0;
    r.reseed(hash32(seed, STREAM.articleBody, ident));
    const author = articleAuthor.get(ident);
    const publishedMs = articles.time(row);
    const createdMs = created.get(ident);
    const words = Array.from({ length: 3 + r.int(5) }, () => r.pick(WORDS));
    const title = words.join(' ');
    const score = articleScore.get(ident) + (version?.v ?? 0);
    const baseViews = r.int(5000) + (version?.v ?? 0) * 3 + views;
    const stats = {
      comments: r.int(60),
      dislikes: r.int(30),
      gemTips: r.int(10),
      likes: Math.max(0, score) + r.int(20),
      score,
      subs: r.int(40),
      tips: r.int(25),
      views: baseViews,
    };
    const rec: ApiRecord = {
      _id: articles.oid(row),
      title,
      authorId: userId(author),
      countryId: countryIds[userCountry.get(author)],
      type: r.pick(ARTICLE_TYPES),
      category: ARTICLE_CATEGORIES[category.get(ident)],
      language: LANGUAGES[language.get(ident)],
      ...(r.chance(0.7) ? { image: `https://cdn.example.invalid/articles/${articles.oid(row)}.jpg` } : {}),
      createdAt: isoString(createdMs),
      author: `${WORDS[hash32(seed, author) % WORDS.length] as string}${author}`,
      slug: `${words.join('-')}-${ident}`,
      publishedAt: isoString(publishedMs),
      updatedAt: isoString(version?.at ?? publishedMs),
      content: Array.from({ length: 20 + r.int(80) }, () => r.pick(WORDS)).join(' '),
      score,
      views: baseViews,
      isDeleted: false,
      isPublished: true,
      isPublic: r.chance(0.9),
      stats,
      comments: stats.comments,
      __v: version?.v ?? 0,
    };
    if (variant === 'full') return pickFields(rec, articleFullKeys);
    if (variant === 'lite') return pickFields(rec, articleLiteKeysWithoutContent);
    return pickFields(rec, articleLiteKeys); // the feed: lite fields plus content
  };
}
