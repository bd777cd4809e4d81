import fs from 'node:fs';
import path from 'node:path';
import { projectDir } from '../paths';
import { makeExecutableSchema } from '@graphql-tools/schema';
import type { GraphQLSchema } from 'graphql';
import { CompanyFields, CompanySummaryFields, EdgeFields } from './resolvers/company.fields';
import { companies, suggest_companies } from './resolvers/query.companies';
import { company } from './resolvers/query.company';
import { edge } from './resolvers/query.edge';
import { job, jobs, tierViewLimits } from './resolvers/query.job';
import { tierMap } from './resolvers/query.tiermap';
import { cluster } from './resolvers/query.cluster';
import { paths } from './resolvers/query.paths';
import { cancelJob, startTierView } from './resolvers/mutation.tierview';
import { cluster_customers, cluster_suppliers, customers, suppliers } from './resolvers/query.relationships';
import { DateScalar, DateTimeScalar } from './scalars';

/** The `schema/` directory. */
export function schemaDir(): string {
  return projectDir('schema', 'company.graphql');
}

/** The SDL of every `schema/*.graphql` file, in name order. */
export function loadTypeDefs(): string[] {
  const dir = schemaDir();
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.graphql'))
    .sort()
    .map((f) => fs.readFileSync(path.join(dir, f), 'utf8'));
}

/** The executable schema: SDL from `schema/`, resolver modules by domain (`resolvers/`). */
export function buildSchema(): GraphQLSchema {
  return makeExecutableSchema({
    typeDefs: loadTypeDefs(),
    resolvers: {
      Date: DateScalar,
      DateTime: DateTimeScalar,
      Query: {
        companies,
        suggest_companies,
        company,
        edge,
        suppliers,
        customers,
        cluster_suppliers,
        cluster_customers,
        job,
        jobs,
        tierViewLimits,
        tierMap,
        cluster,
        paths,
      },
      Mutation: { startTierView, cancelJob },
      Company: CompanyFields,
      CompanySummary: CompanySummaryFields,
      Edge: EdgeFields,
    },
  });
}
