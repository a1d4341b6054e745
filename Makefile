# The task runner. The README's Quick start uses `make up` and `make test`.
SHELL := /bin/bash
.DEFAULT_GOAL := help
UV = $(shell command -v uv 2>/dev/null || echo $(HOME)/.local/bin/uv)

.PHONY: help bootstrap web openapi sdk up test test-unit lint asyncapi format infra-up infra-down infra-status bench bench-quick

help:  ## list the targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

bootstrap:  ## install uv (if missing) and the workspace into .venv
	@bash scripts/bootstrap

# The web app (web/, served by the gateway at /): npm ci when the lock file is newer than the
# installed packages, the Vite build when any of its sources is newer than web/dist.
WEB_SOURCES = $(shell find web/src web/public -type f ! -name '*.gen.d.ts' 2>/dev/null) \
	web/index.html web/package.json web/vite.config.ts web/tsconfig.json web/tsconfig.node.json \
	web/openapi.json web/openapi-stream.json

web/node_modules/.package-lock.json: web/package-lock.json
	@cd web && npm ci --no-audit --no-fund --loglevel=error

web/dist/index.html: web/node_modules/.package-lock.json $(WEB_SOURCES)
	@cd web && npm run --silent build
	@touch $@

web: web/dist/index.html  ## build the web app into web/dist (npm ci and Vite, only when out of date)

openapi: bootstrap  ## regenerate web/openapi.json (and the price stream's) from the gateway's code, then the SDK from it
	@$(UV) run --frozen python web/scripts/openapi.py
	@$(UV) run --frozen python scripts/sdk.py

sdk: bootstrap  ## regenerate the Python SDK (libs/sdk/src, not in git) from web/openapi.json
	@$(UV) run --frozen python scripts/sdk.py --force

up: bootstrap web  ## run the exchange: infrastructure plus every service (Ctrl-C stops what it started)
	@$(UV) run --frozen python -m gpux_devinfra.exchange

test: bootstrap web  ## run every test (unit, integration, end-to-end, browser) against real Kafka, PostgreSQL and Redis
	@cd web && npm test --silent
	@$(UV) run --frozen gpux infra up
	@$(UV) run --frozen pytest

test-unit: bootstrap web/node_modules/.package-lock.json  ## only the fast unit tests
	@cd web && npm test --silent
	@$(UV) run --frozen pytest -m unit

lint: bootstrap web/node_modules/.package-lock.json  ## ruff (lint, format, complexity), mypy strict (code and tests), import-linter, function length, AsyncAPI drift, the web app's types
	@$(UV) run --frozen ruff check .
	@$(UV) run --frozen ruff format --check .
	@$(UV) run --frozen mypy libs/*/src services/*/src
	@# Test folders one at a time: each has its own conftest.py and test module names.
	@for d in libs/*/tests services/*/tests tests/* bench web/scripts; do \
		[ -n "$$(find $$d -name '*.py' -print -quit)" ] || continue; \
		$(UV) run --frozen mypy $$d || exit 1; \
	done
	@$(UV) run --frozen lint-imports
	@$(UV) run --frozen python scripts/function_length.py
	@cd web && npm run --silent typecheck

asyncapi: bootstrap  ## regenerate docs/asyncapi.yaml from the topic registry
	@$(UV) run --frozen python -m gpux_platform.asyncapi > docs/asyncapi.yaml

format: bootstrap  ## apply ruff's formatting and fixes
	@$(UV) run --frozen ruff format .
	@$(UV) run --frozen ruff check --fix .

bench: bootstrap  ## benchmarks (the whole exchange through its API, matching engine, matching recovery, billing settlement, order funding and trades, outbox after a PostgreSQL restart); see docs/PERFORMANCE.md
	@$(UV) run --frozen python bench/matching.py
	@$(UV) run --frozen gpux infra up
	@$(UV) run --frozen python bench/matching_recovery.py --db
	@$(UV) run --frozen python bench/billing.py
	@$(UV) run --frozen python bench/billing_orders.py
	@$(UV) run --frozen python bench/billing_trades.py
	@$(UV) run --frozen python bench/pricing_trades.py
	@$(UV) run --frozen python bench/restart.py
	@$(UV) run --frozen python bench/restart_orders.py
	@$(UV) run --frozen python bench/pipeline.py --json .gpux/bench-pipeline.json

bench-quick: bootstrap  ## the pipeline benchmark in ~3 minutes (smaller rates and counts): a smoke run
	@$(UV) run --frozen gpux infra up
	@$(UV) run --frozen python bench/pipeline.py --quick

infra-up: bootstrap  ## start local Kafka, PostgreSQL, Redis
	@$(UV) run --frozen gpux infra up

infra-status: bootstrap  ## show local infrastructure
	@$(UV) run --frozen gpux infra status

infra-down: bootstrap  ## stop local infrastructure we started
	@$(UV) run --frozen gpux infra down
