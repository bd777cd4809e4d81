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
  profile(vid: string): Promise<CompanyProfile>;
}

export function createContext(services: Services, keyId: string | null = null): GraphQLContext {
  const profiles = new Map<string, Promise<CompanyProfile>>();
  return {
    services,
    keyId,
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
