import type { CompanyProfile } from '../domain/model';
import type { CompaniesService } from '../services/companies.service';
import type { EdgesService } from '../services/edges.service';
import type { JobQueue } from '../jobs/job-queue';
import type { PathsService } from '../services/paths.service';
import type { RelationshipsService } from '../services/relationships.service';

export interface Services {
  companies: CompaniesService;
  relationships: RelationshipsService;
  edges: EdgesService;
  paths: PathsService;
  jobs: JobQueue;
}

/** Per-request state: the services, the caller, and a cache so one profile is loaded once per request. */
export interface GraphQLContext {
  services: Services;
  /** Id of the API key of the request (never the key): the owner of the runs it starts and sees. */
  keyId: string | null;
  /**
   * The address the client reached this server by (`http://host:port`), for the links the server
   * serves itself (downloads) when no public URL is configured; read only by the resolvers that
   * sign such links, so other requests do not work it out. Absent outside a request.
   */
  origin?: () => string | undefined;
  profile(vid: string): Promise<CompanyProfile>;
}

export function createContext(
  services: Services,
  keyId: string | null = null,
  origin?: () => string | undefined,
): GraphQLContext {
  const profiles = new Map<string, Promise<CompanyProfile>>();
  return {
    services,
    keyId,
    ...(origin === undefined ? {} : { origin }),
    profile(vid) {
      let p = profiles.get(vid);
      if (!p) {
        p = services.companies.profile(vid);
        profiles.set(vid, p);
      }
      return p;
    },
  };
}
