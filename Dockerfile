# One image recipe for the five services: `docker build --build-arg APP=executor .`
# Stage 1 compiles the monorepo to dist/; stage 2 carries only dist/, production deps and the alias hook.
FROM node:20.20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev --ignore-scripts

FROM node:20.20-bookworm-slim AS runtime
ARG APP
RUN test -n "$APP" || (echo "build with --build-arg APP=<k8s-gateway|inspector|planner|executor|access-scheduler>" >&2; exit 1)
# Inside a container every service listens on 8080 unless told otherwise (compose sets HTTP_PORT).
ENV NODE_ENV=production \
    APP=${APP} \
    HTTP_PORT=8080
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/tools/register-aliases.mjs /app/tools/alias-hooks.mjs ./tools/
RUN test -f "dist/apps/${APP}/src/main.js"
USER node
# /readyz is 200 only when the service's dependencies (NATS, and Redis for the access-scheduler) answer.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+process.env.HTTP_PORT+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["sh", "-c", "exec node --import ./tools/register-aliases.mjs \"dist/apps/${APP}/src/main.js\""]
