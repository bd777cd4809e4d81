import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config/env';
import { ROOT } from '../support/paths';

interface Service {
  image?: string;
  build?: unknown;
  ports?: string[];
  environment?: Record<string, string>;
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
}

const compose = parse(fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8')) as {
  services: Record<string, Service>;
};
const services = compose.services;

/** Compose's `${NAME:-default}` interpolation, with nothing set in the environment. */
function interpolate(v: string): string {
  return v.replace(/\$\{([A-Z0-9_]+)(?::-([^}]*))?\}/g, (_m, _name: string, def?: string) => def ?? '');
}

const appEnv = Object.fromEntries(
  Object.entries(services.app?.environment ?? {}).map(([k, v]) => [k, interpolate(String(v))]),
);

describe('docker-compose.yml (parsed; no Docker engine runs here)', () => {
  it('has Neo4j 5 community, MongoDB, the GCS emulator and the app built from the Dockerfile', () => {
    expect(services.neo4j?.image).toMatch(/^neo4j:5[-.\w]*community/);
    expect(services.mongo?.image).toMatch(/^mongo:/);
    expect(services.gcs?.image).toMatch(/^fsouza\/fake-gcs-server/);
    expect(services.app?.build).toBe('.');
  });

  it.each(['neo4j', 'mongo', 'gcs'])('%s has a health check the app waits for', (name) => {
    expect(services[name]?.healthcheck?.test.length).toBeGreaterThan(0);
    expect(services.app?.depends_on?.[name === 'gcs' ? 'gcs-init' : name]?.condition).toMatch(
      /^service_(healthy|completed_successfully)$/,
    );
  });

  it('publishes the ports of the app, Bolt, the Neo4j browser, MongoDB and the emulator', () => {
    expect(services.app?.ports).toContain('8080:8080');
    expect(services.neo4j?.ports).toEqual(expect.arrayContaining(['7474:7474', '7687:7687']));
    expect(services.mongo?.ports).toContain('27017:27017');
    expect(services.gcs?.ports).toContain('4443:4443');
  });

  it('gives the app every setting its production configuration needs, and they validate', () => {
    // The key file is a path inside the app's container: not there to read here.
    const config = loadConfig(appEnv, { files: false });
    expect(config).toMatchObject({
      STORE: 'neo4j',
      JOBS_BACKEND: 'mongodb',
      BLOB_STORE: 'gcs',
      SEED_DEMO: false,
    });
    expect(config.PORT).toBe(8080);
    expect(config.HOST).toBe('0.0.0.0');
  });

  it('points the app at the services by their compose names and ports', () => {
    expect(new URL(appEnv.NEO4J_URI!).host).toBe('neo4j:7687');
    expect(appEnv.NEO4J_URI!.startsWith('neo4j://')).toBe(true);
    expect(new URL(appEnv.MONGODB_URI!).host).toBe('mongo:27017');
    expect(new URL(appEnv.STORAGE_EMULATOR_HOST!).host).toBe('gcs:4443');
    // The password the app uses is the one Neo4j is started with.
    expect(interpolate(services.neo4j!.environment!.NEO4J_AUTH!)).toBe(`neo4j/${appEnv.NEO4J_PASSWORD}`);
    expect(interpolate(String(services['gcs-init']?.environment?.GCS_BUCKET))).toBe(appEnv.GCS_BUCKET);
  });
});

describe('docker-compose.yml and the Dockerfile name the versions CI tests', () => {
  const pom = fs.readFileSync(path.join(ROOT, '.ci', 'neo4j', 'pom.xml'), 'utf8');
  const servicesScript = fs.readFileSync(path.join(ROOT, '.ci', 'services.sh'), 'utf8');
  const minor = (v: string) => v.split('.').slice(0, 2).join('.');

  it('Neo4j: the LTS line of the test server', () => {
    const tested = /<neo4j\.version>([\d.]+)<\/neo4j\.version>/.exec(pom)?.[1];
    expect(tested).toMatch(/^5\.26\./);
    expect(services.neo4j?.image).toBe(`neo4j:${minor(tested!)}-community`);
  });

  it('fake-gcs-server: the release the tests build', () => {
    const tested = /gcs_version=v([\d.]+)/.exec(servicesScript)?.[1];
    expect(tested).toBeDefined();
    expect(services.gcs?.image).toBe(`fsouza/fake-gcs-server:${tested!}`);
  });

  it('MongoDB: a major version the Node.js driver supports, and the Node.js major of CI', () => {
    // CI has no mongod (only a wire-compatible stand-in); driver 6.x supports MongoDB 4.2 to 8.
    expect(services.mongo?.image).toBe('mongo:7');
    const dockerfile = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
    const nodeMajor = process.versions.node.split('.')[0]!;
    for (const from of dockerfile.split('\n').filter((l) => /^FROM\s/.test(l)))
      expect(from).toMatch(new RegExp(`^FROM node:${nodeMajor}[-.]`));
  });

  it('signs emulator download links with a key the compose stack makes', () => {
    expect(appEnv.GCS_KEY_FILE).toBe('/keys/emulator-key.json');
    expect(services.app?.depends_on?.['gcs-key']?.condition).toBe('service_completed_successfully');
  });
});

describe('Dockerfile', () => {
  const dockerfile = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
  const stages = dockerfile.split('\n').filter((l) => /^FROM\s/.test(l));

  it('builds in one stage and runs from a slimmer one', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(stages.at(-1)).toMatch(/slim/);
  });

  it('runs as a non-root user', () => {
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    const user = /^USER\s+(\S+)/m.exec(runtime)?.[1];
    expect(user).toBeDefined();
    expect(['root', '0']).not.toContain(user);
  });

  it('limits the C library to two memory arenas in the image that serves', () => {
    // Without it a server of 1M companies held some 600 MB more in per-thread arenas.
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(runtime).toMatch(/^\s+MALLOC_ARENA_MAX=2\b/m);
  });

  it('ships the query files, the GraphQL schema and the seeds the app reads at run time', () => {
    for (const dir of ['cypher', 'schema', 'seed'])
      expect(dockerfile).toMatch(new RegExp(`COPY .*${dir} \\./${dir}`));
  });
});
