import type { CompanyCore } from './model';

/** What a search matches a company's names by: its name and aliases (see SearchRow). */
export type SearchName = Pick<SearchRow, 'name' | 'aliases'>;

/** One company as the search index needs it, streamed at index build time. */
export interface SearchRow {
  /** The fields a search result shows, kept by the index so that results need no store read. */
  core: CompanyCore;
  vid: string;
  name: string;
  /** Cluster parents and companies in a cluster of one are searched by default. */
  searchedByDefault: boolean;
  /** Parent of a cluster of several companies: part of a company's importance in relevance order. */
  isClusterParent: boolean;
  /**
   * Other names the company is known by (former and trading names, tickers, abbreviations), matched like
   * the name: the import format's `aliases` column. Empty when it has none.
   */
  aliases: string[];
  /** Free-text industry, for the industry filter; null when unknown. */
  industry: string | null;
  /** The industry's code and its classification (NAICS, ISIC, ...); null when not given. */
  industryCode: string | null;
  industryCodeSystem: string | null;
  /** Relationships of the company (suppliers + customers): the tie-break of search order. */
  degree: number;
  country: string | null;
  /** Lower-cased hosts of the company's domains and websites. */
  hosts: string[];
  /** Cities of the company's addresses. */
  cities: string[];
  /** Values of the company's identifiers. */
  identifierValues: string[];
}
