# The blog (generated/) as an image: compiled in one stage, its production packages installed in
# another, run in a third as the unprivileged `node` user. `docker build -t svcgen-blog .`;
# `docker compose up --build` adds PostgreSQL.

FROM node:20-bookworm-slim AS toolchain
# better-sqlite3 and bcrypt compile from source when no prebuilt binary can be downloaded.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
COPY runtime/package.json runtime/

FROM toolchain AS build
RUN npm install --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY bench bench
COPY generated generated
COPY generator generator
COPY runtime runtime
COPY specs specs
# The runtime package into runtime/dist, then the blog into dist/ against its declarations.
RUN npm run build:ts

# What the blog runs: the runtime workspace's production dependencies, without the generator's.
FROM toolchain AS packages
RUN npm install --omit=dev --workspace runtime --no-audit --no-fund

FROM node:20-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8000
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=packages /app/node_modules node_modules
COPY --from=build /app/runtime/package.json runtime/
COPY --from=build /app/runtime/dist runtime/dist
COPY --from=build /app/dist dist
RUN mkdir -p data && chown node:node data
USER node
EXPOSE 8000
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + process.env.PORT + '/api/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Migrates (under a lock: replicas may start together), then serves; SIGTERM drains the requests in flight.
CMD ["node", "dist/generated/main.js"]
