# Zuno. `make run` runs the scripted demo on the embedded SQLite default (no servers, no API
# key); `make test` installs and starts what the tests need, then runs them all.

GO        ?= go
DEMO_DIR  ?= $(CURDIR)/.zuno-demo
# Each checkout gets its own throwaway cluster (directory and port), so two checkouts on one
# machine never test against each other's database.
PG_DIR    ?= /tmp/zuno-pg-$(shell printf %s "$(CURDIR)" | cksum | cut -d' ' -f1)

.PHONY: run ripgrep build test test-go deps postgres stop-postgres bench fuzz vet clean

# build: zuno and, beside it, the dedicated shell guard it runs for every command
# (docs/shell-execution.md, "The guard").
build:
	$(GO) build -buildvcs=auto -o bin/zuno ./cmd/zuno
	$(GO) build -buildvcs=auto -o bin/zuno-guard ./cmd/zuno-guard

# run: a scripted agent session (build agent, scripted provider) that reproduces a failing
# test in a scratch workspace, reads, greps, patches the file and re-runs the test.
# The demo's shell calls run in the bubblewrap sandbox; where the machine cannot host it (no
# user namespaces), it falls back to running them unconfined in the scratch workspace, with a
# warning, rather than not running at all (docs/sandbox.md).
run: build ripgrep
	@rm -rf $(DEMO_DIR) && mkdir -p $(DEMO_DIR)
	ZUNO_DB=$(DEMO_DIR)/zuno.db ZUNO_CONFIG=$(DEMO_DIR)/config.json ./bin/zuno --sandbox-on-unavailable run-unconfined demo --dir $(DEMO_DIR)
	@echo
	@echo "The demo's database is $(DEMO_DIR)/zuno.db; to run the commands above:"
	@echo "  export ZUNO_DB=$(DEMO_DIR)/zuno.db PATH=$(CURDIR)/bin:\$$PATH"

# ripgrep: the demo's grep call drives rg; bubblewrap confines its shell calls. Install them
# when missing (Debian), else say so.
ripgrep:
	@{ command -v rg >/dev/null 2>&1 && [ -x /usr/bin/bwrap ]; } || { \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -q && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q ripgrep bubblewrap; } || \
		echo "warning: ripgrep or bubblewrap is not installed: the demo's grep call reports rg unavailable, its shell calls run unconfined"

# deps installs what the tests need on a Debian machine (as root, or via sudo): PostgreSQL
# for the Postgres adapters, ripgrep for the glob/grep tools, bubblewrap for the sandbox, zsh
# and ksh for the exit-policy table (every command run under bash, ksh and zsh), promtool
# (package prometheus) for the alerting rules of ops/prometheus.
deps:
	@{ ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 && command -v rg >/dev/null 2>&1 && [ -x /usr/bin/bwrap ] && \
		command -v zsh >/dev/null 2>&1 && command -v ksh >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; } || { \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -q && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql ripgrep bubblewrap zsh ksh prometheus; }

postgres: deps
	@.ci/start-postgres $(PG_DIR) > $(PG_DIR).url
	@echo "PostgreSQL for tests: $$(cat $(PG_DIR).url)"

# stop-postgres stops this checkout's test cluster (its data stays in PG_DIR until removed).
stop-postgres:
	@.ci/stop-postgres $(PG_DIR)

# test: everything, with the race detector, on SQLite and on a real PostgreSQL. The Codex
# apply_patch scenarios are third-party data kept beside the checkout, not in it: say whether
# they ran, since a skip is silent without -v.
test: postgres
	ZUNO_TEST_POSTGRES_URL=$$(cat $(PG_DIR).url) $(MAKE) test-go
	@if [ -d ../shared/conformance/apply_patch/scenarios ]; then \
		echo "apply_patch conformance: the Codex scenarios in ../shared/conformance ran"; \
	else echo "note: apply_patch conformance skipped: ../shared/conformance is not beside this checkout"; fi

# GORACE: a race-instrumented program sleeps 1 s at exit by default (atexit_sleep_ms), to let
# other goroutines report; the CLI scripts and the sandbox and cluster tests start thousands of
# such processes (every `zuno` command and every shell guard is one), which made that sleep most
# of CI's time. A race is still reported, and fails its process with exit 66, when it happens.
test-go: vet
	GORACE=$${GORACE:-atexit_sleep_ms=0} $(GO) test -race -count=1 -timeout 25m ./...

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	$(GO) vet ./...

# bench: the benchmarks with their baselines in the same run: append vs raw INSERT and rebuild
# (SQLite and Postgres), per-step turn overhead at steps 10/100/1000, 8 parallel read-only
# calls vs serial, the grep tool vs plain rg over GOROOT/src, 16 concurrent sessions on Postgres.
bench: postgres
	ZUNO_TEST_POSTGRES_URL=$$(cat $(PG_DIR).url) $(GO) test -run '^$$' -bench . -benchtime 2s ./adapters/eventstore/sqlstore/ ./projections/
	$(GO) test -run '^$$' -bench StepOverhead -benchtime 1x -count 3 ./commands/turn/
	ZUNO_TEST_POSTGRES_URL=$$(cat $(PG_DIR).url) $(GO) test -run '^$$' -bench ConcurrentSessionsPostgres -benchtime 3x ./cmd/zuno/
	$(GO) test -run '^$$' -bench ParallelReadOnly -benchtime 10x ./commands/turn/
	$(GO) test -run '^$$' -bench 'GrepToolVsRG' -benchtime 20x -count 3 ./adapters/tools/toolset/
	ZUNO_TEST_POSTGRES_URL=$$(cat $(PG_DIR).url) $(GO) test -run '^$$' -bench ServeLoad -benchtime 1x ./ops/loadtest/

# fuzz: each fuzz target for a while.
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzPlanUpdate -fuzztime 30s ./domain/work/
	$(GO) test -run '^$$' -fuzz FuzzTodoUpdate -fuzztime 30s ./domain/work/
	$(GO) test -run '^$$' -fuzz FuzzDecode -fuzztime 30s ./events/
	$(GO) test -run '^$$' -fuzz FuzzValidateAppend -fuzztime 30s ./events/
	$(GO) test -run '^$$' -fuzz FuzzValidTypeName -fuzztime 30s ./events/
	$(GO) test -run '^$$' -fuzz FuzzCanonicalUUID -fuzztime 30s ./events/
	$(GO) test -run '^$$' -fuzz FuzzVerify -fuzztime 30s -fuzzminimizetime 2s ./domain/prompt/
	$(GO) test -run '^$$' -fuzz FuzzRenderWorkState -fuzztime 30s -fuzzminimizetime 2s ./domain/prompt/
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime 30s ./domain/patch/
	$(GO) test -run '^$$' -fuzz FuzzPlan -fuzztime 30s ./domain/patch/
	$(GO) test -run '^$$' -fuzz FuzzExpand -fuzztime 30s -fuzzminimizetime 2s ./domain/prompt/
	$(GO) test -run '^$$' -fuzz FuzzGitPathsParsers -fuzztime 30s ./adapters/sandbox/
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime 30s ./adapters/provider/scripted/
	$(GO) test -run '^$$' -fuzz FuzzDecoder -fuzztime 30s ./adapters/tools/search/
	$(GO) test -run '^$$' -fuzz FuzzCheckLines -fuzztime 30s ./adapters/tools/search/
	$(GO) test -run '^$$' -fuzz FuzzValidate -fuzztime 30s ./adapters/tools/toolset/
	$(GO) test -run '^$$' -fuzz FuzzValidate -fuzztime 30s ./adapters/tools/bg/
	$(GO) test -run '^$$' -fuzz FuzzValidate -fuzztime 30s ./adapters/tools/worktools/
	$(GO) test -run '^$$' -fuzz FuzzValidate -fuzztime 30s ./adapters/tools/schema/
	$(GO) test -run '^$$' -fuzz FuzzReader -fuzztime 30s ./adapters/tools/schema/
	$(GO) test -run '^$$' -fuzz FuzzRestore -fuzztime 30s ./adapters/tools/toolset/
	$(GO) test -run '^$$' -fuzz FuzzProjectRuleKey -fuzztime 30s -fuzzminimizetime 2s ./adapters/config/
	$(GO) test -run '^$$' -fuzz FuzzMatchesKey -fuzztime 30s -fuzzminimizetime 2s ./domain/permission/
	$(GO) test -run '^$$' -fuzz '^FuzzAssess$$' -fuzztime 30s -fuzzminimizetime 2s ./domain/risk/
	$(GO) test -run '^$$' -fuzz FuzzAssessInWorkspace -fuzztime 30s -fuzzminimizetime 2s ./domain/risk/
	$(GO) test -run '^$$' -fuzz FuzzGuard -fuzztime 30s ./domain/sandbox/

clean:
	rm -rf bin $(DEMO_DIR)
