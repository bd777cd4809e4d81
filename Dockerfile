# Multi-stage image of tiergraph: a build stage with the compilers that the native
# modules (embedded engine, SQLite) need, and a slim runtime stage that runs as
# the unprivileged `node` user.
FROM node:20-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY web ./web
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim AS runtime
# MALLOC_ARENA_MAX: glibc gives each thread that allocates (the embedded engine's query
# threads, the search threads) an arena of its own and keeps what is freed there; two
# arenas held the 1M-company server some 600 MB smaller (README, Memory).
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/data \
    MALLOC_ARENA_MAX=2
WORKDIR /app
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
COPY --chown=node:node package.json ./
COPY --chown=node:node cypher ./cypher
COPY --chown=node:node schema ./schema
COPY --chown=node:node seed ./seed
RUN mkdir -p /data && chown node:node /data \
 && ln -s /app/dist/src/cli/main.js /usr/local/bin/tiergraph && chmod +x /app/dist/src/cli/main.js
USER node
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# The server's node flags (SERVE_NODE_FLAGS in src/heap-settings.ts): given here, since V8 takes
# them only at start, and NODE_OPTIONS is left to the operator.
ENTRYPOINT ["node", "--max-semi-space-size=32", "/app/dist/src/cli/main.js"]
CMD ["serve"]
