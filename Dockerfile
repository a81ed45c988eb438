# The gamedata worker image (also runs the simulator and every other `gamedata` command).
#
#   docker build -t gamedata-pipeline .
#   docker run --rm gamedata-pipeline --help
#   docker run -e KAFKA_BROKERS=... -e SCHEMA_REGISTRY_URL=... -e REDIS_URL=... -e GAMEDATA_API_URL=... \
#     -e GAMEDATA_API_KEY=... -p 9464:9464 gamedata-pipeline worker --concurrency 32
#
# Two stages: `build` installs the dev dependencies and packs the package (`npm pack` runs `prepare`, which compiles
# dist/), then unpacks the tarball beside the committed package-lock.json; `runtime` installs the production
# dependencies of that lock file with `npm ci --omit=dev --ignore-scripts`: exactly the locked versions (npm ci fails
# rather than resolve anything anew), and no dependency's install script runs at build time (the platform's
# prebuilt msgpackr-extract binary is a locked optional package). test/integration/package/packed-tarball.test.ts
# ("the image's steps") does the same without a container engine and compares what was installed with the lock file.
# No source checkout, no dev dependencies, no TypeScript loader in the image (typescript itself comes along as a
# required peer of @trpc/server, unused at run time); it runs as the unprivileged `node` user. SIGTERM drains (running slices checkpoint and hand back; give compose/Kubernetes a grace period above
# GAMEDATA_DRAIN_TIMEOUT, default 30s). HEALTHCHECK asks the worker's /healthz (GAMEDATA_METRICS_PORT, default 9464).
ARG NODE_VERSION=24

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
# npm 11 may refuse a lock file that lacks other platforms' optional packages (see scripts/ensure-deps.sh):
# `npm install --no-save` installs the same locked versions then.
RUN npm ci --no-audit --no-fund --ignore-scripts || npm install --no-save --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY schemas ./schemas
COPY src ./src
RUN npm pack --pack-destination /pkg && mv /pkg/gamedata-pipeline-*.tgz /pkg/gamedata-pipeline.tgz \
  && mkdir /pkg/app && tar -xzf /pkg/gamedata-pipeline.tgz -C /pkg/app --strip-components=1 \
  && cp package-lock.json /pkg/app/package-lock.json

# The upstream simulator (tools/simulator/), for demos and local development: a tool of the repository, not of the
# package, so it runs from source on the build stage's full install (`docker build --target simulator`).
FROM build AS simulator
COPY tools ./tools
USER node
ENTRYPOINT ["node", "--import", "tsx", "/src/src/app/cli/main.ts"]
CMD ["simulate", "serve", "--host", "0.0.0.0", "--port", "4010", "--scale", "small"]

FROM node:${NODE_VERSION}-bookworm-slim AS runtime
# /metrics, /healthz and /readyz reachable from outside the container (a scraper, the orchestrator's probes).
ENV NODE_ENV=production GAMEDATA_METRICS_HOST=0.0.0.0 GAMEDATA_METRICS_PORT=9464
WORKDIR /app
COPY --from=build /pkg/app /app
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
  && npm cache clean --force
USER node
EXPOSE 9464
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.GAMEDATA_METRICS_PORT || 9464) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
STOPSIGNAL SIGTERM
# The heap: bounded, and grown 3x its live size between major GCs (docs/operations.md, section 1).
ENTRYPOINT ["node", "--max-old-space-size=256", "--heap-growing-percent=200", "/app/bin/gamedata.mjs"]
CMD ["worker"]
