# Worker image: compiles the TypeScript in a build stage, ships only dist/, bin/ and production dependencies.
# BASE_IMAGE: any Node 20 image with npm and a `node` user (the container test passes a locally built stand-in).
ARG BASE_IMAGE=node:20-slim
FROM ${BASE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY src ./src
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM ${BASE_IMAGE}
ENV NODE_ENV=production
# V8 heap settings: bin/node-flags.js's defaults (test/bin/node-flags.test.ts checks they agree), given here so that
# bin/adjunct.js need not re-execute itself behind a relay process (it still does on one CPU, for --single-threaded-gc).
# NODE_OPTIONS overrides the heap bounds; node refuses --heap-growing-percent there, so it is on the ENTRYPOINT.
ENV NODE_OPTIONS="--max-old-space-size=128 --max-semi-space-size=16"
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/bin ./bin
USER node
EXPOSE 8080
# Liveness on the HTTP port the mounted config uses (ADJUNCT_HTTP_PORT, default 8080).
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.ADJUNCT_HTTP_PORT || 8080}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "--heap-growing-percent=300", "bin/adjunct.js"]
CMD ["run", "--config", "/etc/adjunct/pipelines.yaml"]
