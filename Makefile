# The two commands of the quickstart: `make run` and `make test`. Both install what they need first.
SHELL := /bin/bash
UV := $(shell command -v uv 2>/dev/null || echo "python3 -m uv")
ADDR ?= 127.0.0.1:8000
TEST_WORKERS ?= 3

.PHONY: run test install lint format bench

install:
	@$(UV) --version >/dev/null 2>&1 || python3 -m pip install --quiet "uv>=0.9"
	$(UV) sync --frozen

run: install
	@# A second make run beside a running one stops here, saying so, before migrating.
	$(UV) run python manage.py serve --check $(ADDR)
	$(UV) run python manage.py migrate --noinput
	$(UV) run python manage.py import_personas personas/samples/ --missing
	$(UV) run python manage.py import_formats cards/ --missing
	$(UV) run python manage.py ensure_admin
	$(UV) run python manage.py serve $(ADDR)

test: install
	$(UV) run ruff check .
	@# Three workers on two cores: most tests wait on sockets, servers and subprocesses, not the CPU.
	@# loadfile keeps each test file in one process, so a module-scoped fixture (SmolLM2, a Chromium, the
	@# bench runs) starts once.
	$(UV) run pytest -n $(TEST_WORKERS) --dist loadfile --durations=30 -m "not starves_cpu"
	@# The CPU-starved duel holds both cores with busy loops for minutes: alone, so no other test is starved.
	$(UV) run pytest -q -m starves_cpu tests/llm
	@# The engine and room suites again, on PostgreSQL, the engine's runs as tasks on a Celery worker
	@# with Redis as the broker (CI starts both: see bin/start-services).
	@if [ -n "$$CHAOSLM_TEST_DATABASE_URL" ]; then \
	  DATABASE_URL="$$CHAOSLM_TEST_DATABASE_URL" REDIS_URL="$$CHAOSLM_TEST_REDIS_URL" CHAOSLM_TEST_ENGINE_RUNNER=celery \
	    $(UV) run pytest -q tests/debates/test_engine.py \
	    tests/debates/formats/test_structured.py tests/rooms/test_rooms.py tests/debates/test_command.py tests/debates/test_hold.py; \
	elif [ "$$CI" = "true" ]; then echo "CHAOSLM_TEST_DATABASE_URL is required under CI"; exit 1; \
	else echo "(PostgreSQL run skipped: eval \"\$$(bin/start-services)\" to include it)"; fi

lint:
	$(UV) run ruff check .
	$(UV) run ruff format --check .

bench: install
	$(UV) run python bench/duel_critical_path.py
