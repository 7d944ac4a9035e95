/** Reply body types from the OpenAPI document's generated types (test/helpers/api-types.generated.ts, `npm run gen:api-types`). */
import type { operations } from './api-types.generated.js';

type Responses<Op extends keyof operations> = operations[Op]['responses'];
type Success<Op extends keyof operations> = Extract<keyof Responses<Op>, 200 | 201 | 202>;

/**
 * The documented JSON body of operation `Op`'s response with status `S`
 * (its success by default), from the OpenAPI document's generated types:
 * `request<ApiBody<'listsList'>>(…)`.
 */
export type ApiBody<Op extends keyof operations, S extends keyof Responses<Op> = Success<Op>> = Responses<Op>[S] extends { content: { 'application/json': infer B } } ? B : never;

/** The spec's error body (every 4xx and 5xx but the deprecated API's 400). */
export interface ErrorBody {
  status: number;
  cause: string;
}

/** GET …/recommendations' JSON body in its default format (`format=legacy` answers `{count, start, recommendations}`). */
export type RecommendationsBody = Extract<ApiBody<'recosGet'>, { result: unknown }>;
/** The same in `format=legacy`. */
export type LegacyRecommendationsBody = Exclude<ApiBody<'recosGet'>, RecommendationsBody>;
