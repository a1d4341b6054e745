# syntax=docker/dockerfile:1
# One image per gpux service, from one Dockerfile:
#   docker build --build-arg SERVICE=gateway -t gpux-gateway .
# SERVICE is one of catalog, pricing, matching, billing, gateway; the image runs
# `python -m gpux_${SERVICE}`. Kubernetes manifests: deploy/k8s (docs/DEPLOY.md).
#
# The workspace is installed editable on purpose: each service finds its migrations at
# services/<name>/migrations relative to its source (bootstrap.py's MIGRATIONS), so the
# runtime image keeps the repository layout under /app: libs/, services/ and .venv/.

ARG PYTHON_IMAGE=python:3.11-slim
ARG NODE_IMAGE=node:20-slim

# The web app (web/, served by the gateway at /): its npm packages exactly as locked, its
# client types generated from the committed OpenAPI documents, then the Vite build.
FROM ${NODE_IMAGE} AS web
WORKDIR /web
COPY web/package.json web/package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund --loglevel=error
COPY web ./
RUN npm run build

FROM ${PYTHON_IMAGE} AS builder
ARG SERVICE=gateway
ARG UV_VERSION=0.13.9
RUN pip install --no-cache-dir "uv==${UV_VERSION}"
ENV UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    UV_PYTHON_DOWNLOADS=never \
    UV_PROJECT_ENVIRONMENT=/app/.venv
WORKDIR /app
COPY pyproject.toml uv.lock ./
COPY libs ./libs
COPY services ./services
# --frozen: exactly uv.lock, or fail. --no-dev and --no-default-groups: no test or bench
# tools. --package: only this service and the libraries it depends on (contracts, platform;
# catalog and gateway also the estimator).
RUN --mount=type=cache,target=/root/.cache/uv \
    uv sync --frozen --no-dev --no-default-groups --package "gpux-${SERVICE}"
# The service must find its migrations in the source tree (a missing directory means "none",
# git keeps no empty directories), and the sources are compiled here because the runtime's
# root filesystem is read-only.
RUN /app/.venv/bin/python -c "import pathlib, gpux_${SERVICE}.bootstrap as b; \
assert b.MIGRATIONS == pathlib.Path('/app/services/${SERVICE}/migrations'), b.MIGRATIONS" \
    && /app/.venv/bin/python -m compileall -q /app/libs /app/services

FROM ${PYTHON_IMAGE} AS runtime
ARG SERVICE=gateway
LABEL org.opencontainers.image.title="gpux-${SERVICE}"
RUN groupadd --system --gid 10001 gpux \
    && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
       --shell /usr/sbin/nologin gpux
ENV PATH=/app/.venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    GPUX_HTTP_HOST=0.0.0.0 \
    SERVICE=${SERVICE}
WORKDIR /app
# Same paths as in the builder: the venv's editable installs point at /app/libs and
# /app/services, and its interpreter link at this image's /usr/local/bin/python3.11.
COPY --from=builder /app/.venv /app/.venv
COPY --from=builder /app/libs /app/libs
COPY --from=builder /app/services /app/services
# The gateway serves it from /app/web/dist (gpux_gateway.webapp); the other services ignore it.
COPY --from=web /web/dist /app/web/dist
USER 10001:10001
# exec: python becomes PID 1 and receives SIGTERM itself (graceful shutdown).
CMD ["/bin/sh", "-c", "exec python -m \"gpux_${SERVICE}\""]
