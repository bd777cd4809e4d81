/** One company as the search index needs it, streamed at index build time. */
export interface SearchRow {
  vid: string;
  name: string;
  /** Cluster parents and companies in a cluster of one are searched by default. */
  searchedByDefault: boolean;
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
