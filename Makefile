# madf — build, test, install.  `make` builds ./madf; `make test` runs every
# test (under ASan/UBSan); `make run` opens madf; `make deps` installs the
# Debian packages the build needs.

PREFIX  ?= /usr/local
DESTDIR ?=
BINDIR   = $(PREFIX)/bin
MANDIR   = $(PREFIX)/share/man
DATADIR  = $(PREFIX)/share/madf

CC      ?= cc
V       ?= 0
ifeq ($(V),0)
  Q = @
  say = @printf '  %-6s %s\n' $(1) $(2);
else
  Q =
  say =
endif
SANITIZE ?=
VERSION := 0.1.0

# The analyzers `madf review` runs (deterministic mode), and the commands
# that show each is there (the stamp rule checks them).
REVIEW_PKGS := cppcheck flawfinder shellcheck universal-ctags cloc pmccabe graphviz gcc clang
REVIEW_CMDS := cppcheck flawfinder shellcheck ctags cloc pmccabe dot gcc clang
PKGS      := libcjson ncursesw libcurl expat libcmark-gfm libnats libmicrohttpd gnutls
TEST_PKGS := cmocka
DEB_PKGS  := pkg-config libcjson-dev libncurses-dev libcurl4-openssl-dev \
             libexpat1-dev libcmark-gfm-dev libcmark-gfm-extensions-dev \
             libcmocka-dev tmux python3 python3-pydantic python3-aiofiles \
             libnats-dev nats-server libmicrohttpd-dev libgnutls28-dev openssl \
             python3-jsonschema \
             python3-cryptography \
             $(REVIEW_PKGS)
# The python where Debian's python3-pydantic and python3-aiofiles are (the
# seed 002 peer of tests/integration/test_seed_peer.sh runs on it); the
# python3 on PATH may be another one.
SEED_PEER_PYTHON ?= /usr/bin/python3
export SEED_PEER_PYTHON

WARN := -Wall -Wextra -Wshadow -Wformat=2 -Wformat-truncation=1 \
        -Wstrict-prototypes -Wmissing-prototypes -Wold-style-definition \
        -Wpointer-arith -Wvla -Wundef -Wcast-qual -Wwrite-strings \
        -Wimplicit-fallthrough \
        -Wmissing-declarations -Wredundant-decls -Wnested-externs
# Warnings are errors for `make test` (so CI), sanitizer builds and
# WERROR=1; a user's plain `make` with a newer compiler does not fail on a
# warning that compiler added.
WERROR ?= $(if $(SANITIZE),1,0)
ifeq ($(WERROR),1)
  WARN += -Werror
endif
CSTD := -std=c11 -D_GNU_SOURCE -DMADF_VERSION='"$(VERSION)"'
OPT  ?= -O2 -g

ifneq ($(SANITIZE),)
  SANFLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
  BUILD    := build/san
else
  SANFLAGS :=
  BUILD    := build/rel
endif

PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
ALL_CFLAGS = $(CSTD) $(OPT) $(WARN) $(SANFLAGS) -I. $(PKG_CFLAGS) $(CFLAGS)
ALL_LDFLAGS = $(SANFLAGS) $(LDFLAGS)
LIBS = $(PKG_LIBS) -lm -lpthread

CORE_SRC   := $(sort $(wildcard core/*.c))
AGENTS_SRC := $(sort $(wildcard agents/*.c))
TUI_SRC    := $(sort $(wildcard tui/*.c))
CLI_SRC    := $(sort $(filter-out cli/main.c,$(wildcard cli/*.c)))
SERVER_SRC := $(sort $(wildcard server/*.c))
CORE_OBJ   := $(CORE_SRC:%.c=$(BUILD)/%.o)
AGENTS_OBJ := $(AGENTS_SRC:%.c=$(BUILD)/%.o)
TUI_OBJ    := $(TUI_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ    := $(CLI_SRC:%.c=$(BUILD)/%.o)
SERVER_OBJ := $(SERVER_SRC:%.c=$(BUILD)/%.o)
LIB_OBJ    := $(CORE_OBJ) $(AGENTS_OBJ) $(TUI_OBJ) $(CLI_OBJ) $(SERVER_OBJ)
UNIT_SRC   := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN   := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
# Programs the integration tests drive (not tests themselves).
HELPER_SRC := $(sort $(wildcard tests/helpers/*.c))
HELPER_BIN := $(HELPER_SRC:tests/helpers/%.c=$(BUILD)/tests/%)

DEPS_STAMP := build/.deps-ok
# The stamp holds the package list it was made for: when DEB_PKGS changes,
# the dependencies are checked (and installed) again.
ifneq ($(strip $(shell cat $(DEPS_STAMP) 2>/dev/null)),$(strip $(DEB_PKGS)))
  $(shell rm -f $(DEPS_STAMP))
endif

.PHONY: all run test unit integration check-rooms check-core check-agents check-server check-cli deps install uninstall clean fuzz \
        sarif-validators serve-peers \
        fuzz-build fuzz-seeds bench
all: madf

# Installs what the build needs when a library is missing (Debian), or names
# the packages elsewhere.
$(DEPS_STAMP):
	@mkdir -p build
	@if pkg-config --exists $(PKGS) $(TEST_PKGS) 2>/dev/null && command -v tmux >/dev/null && command -v python3 >/dev/null && \
	    for c in $(REVIEW_CMDS); do command -v $$c; done | [ "$$(wc -l)" -eq $(words $(REVIEW_CMDS)) ] && \
	    { command -v nats-server || test -x /usr/sbin/nats-server; } >/dev/null && \
	    command -v openssl >/dev/null && \
	    python3 -c 'import cryptography' 2>/dev/null && \
	    $(SEED_PEER_PYTHON) -c 'import pydantic, aiofiles, jsonschema' 2>/dev/null; then \
	  echo '$(strip $(DEB_PKGS))' >$@; else $(MAKE) --no-print-directory deps && echo '$(strip $(DEB_PKGS))' >$@; fi

deps:
	@if command -v apt-get >/dev/null 2>&1; then \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  echo "madf: installing build dependencies: $(DEB_PKGS)"; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $(DEB_PKGS) >/dev/null; \
	else \
	  echo "madf: missing libraries; install these packages (Debian names): $(DEB_PKGS)" >&2; \
	  echo "      pkg-config modules needed: $(PKGS) $(TEST_PKGS)" >&2; exit 1; \
	fi

# The SARIF validators tests/integration/test_review_sarif.sh runs, from npm
# into build/npm (npm comes with Node.js): Microsoft's SARIF Multitool (a
# self-contained Linux binary, no .NET needed; it ships sarif-sdk's
# sarif-2.1.0.json, draft 2020-12) and @microsoft/jest-sarif, only for the
# schema it ships (SARIF 2.1.0 rtm.5, SchemaStore's draft-04 copy).
SARIF_NPM := @microsoft/sarif-multitool@5.7.0 @microsoft/jest-sarif@1.0.0-beta.0
SARIF_MT  := build/npm/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool
sarif-validators: build/npm/.sarif-ok
build/npm/.sarif-ok:
	@command -v npm >/dev/null || { echo "madf: npm (Node.js) is needed to install the SARIF validators: $(SARIF_NPM)" >&2; exit 1; }
	@mkdir -p build/npm
	npm install --prefix build/npm --no-audit --no-fund --ignore-scripts --loglevel=error $(SARIF_NPM)
	chmod u+x $(SARIF_MT)
	@touch $@

# The peers written by others that tests/integration/test_serve_resume.sh
# runs against madf serve, from npm into build/npm: the EventSource client
# (3.x, Node >= 18) for resume with Last-Event-ID, its SSE parser fed
# byte by byte, and an OpenAI-compatible mock model server.
SERVE_NPM := eventsource@3.0.7 eventsource-parser@3.1.1 @dwmkerr/mock-llm@0.1.29
serve-peers: build/npm/.serve-ok
build/npm/.serve-ok:
	@command -v npm >/dev/null || { echo "madf: npm (Node.js) is needed to install the SSE test peers: $(SERVE_NPM)" >&2; exit 1; }
	@mkdir -p build/npm
	npm install --prefix build/npm --no-audit --no-fund --ignore-scripts --loglevel=error $(SERVE_NPM)
	@touch $@

# Copy, then rename: a madf still running (a console) does not block it.
madf: $(BUILD)/madf
	@cp $< $@.new && mv -f $@.new $@

$(BUILD)/madf: $(BUILD)/cli/main.o $(LIB_OBJ)
	$(call say,LINK,$@)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/libmadf.a: $(LIB_OBJ)
	@rm -f $@
	$(call say,AR,$@)ar rcs $@ $^

$(BUILD)/%.o: %.c $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libmadf.a $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(call say,CCLD,$@)$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/libmadf.a $(ALL_LDFLAGS) $(LIBS) -lcmocka

$(BUILD)/tests/%: tests/helpers/%.c $(BUILD)/libmadf.a $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(call say,CCLD,$@)$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/libmadf.a $(ALL_LDFLAGS) $(LIBS)

-include $(shell find build -name '*.d' 2>/dev/null)

# The rooms (ARCHITECTURE.md): core/ is the UI-free library (no curses, and
# none of the rooms above it); agents/ is the runtime and the agent systems
# (no curses, no front end); only the console, tui/, includes curses: the
# command line (cli/) and the servers (server/) never do.
CURSES_INC := \#include *[<"]((n?curses|ncursesw/curses|panel|menu|form)\.h)
check-rooms: check-core check-agents check-server check-cli
check-core:
	@if grep -nE '$(CURSES_INC)|\#include *"(tui|cli|server|agents)/' core/*.c core/*.h; then \
	  echo "core/ must not include curses, tui/, cli/, server/ or agents/" >&2; exit 1; fi
check-agents:
	@if grep -nE '$(CURSES_INC)|\#include *"(tui|cli|server)/' agents/*.c agents/*.h; then \
	  echo "agents/ must not include curses, tui/, cli/ or server/" >&2; exit 1; fi
check-server:
	@if grep -nE '$(CURSES_INC)' server/*.c server/*.h; then \
	  echo "server/ must not include curses" >&2; exit 1; fi
check-cli:
	@if grep -nE '$(CURSES_INC)' cli/*.c cli/*.h; then \
	  echo "cli/ must not include curses (the console is tui/)" >&2; exit 1; fi

# Every test, unit and integration, under ASan/UBSan; ends with "N passed, N failed".
test: check-rooms
	@$(MAKE) --no-print-directory SANITIZE=address,undefined WERROR=1 testbins
	@$(MAKE) --no-print-directory WERROR=1 madf
	@MADF_BIN=$(CURDIR)/build/san/madf UNIT_DIR=$(CURDIR)/build/san/tests sh tests/run.sh

testbins: $(BUILD)/madf $(UNIT_BIN) $(HELPER_BIN)

# The console, running the weekly workflow on the simulated sources (on a
# terminal; elsewhere the workflow headless).
run: madf
	@if [ -t 0 ] && [ -t 1 ]; then ./madf console; else ./madf run weekly; fi

bench: madf
	./madf bench bus

# libFuzzer (clang, ASan + UBSan) over the exact calls the code makes on
# outside input: bus messages, SSE, the config/.env reader, .mcp.json, MCP
# frames (stdio lines, HTTP bodies, event streams), RSS/Atom, the ECB CSV,
# key specs, theme files and the bus URL's percent-escapes; madf serve's request body, agents file, token
# file, limits snapshot and journal, recorded conversations and request
# headers; the review crew's request and checklist and the analyzers'
# output; what an MCP client sends madf mcp; the NATS bus URL, timestamps
# and stream records; events in news text (not in `make test`). `make fuzz` runs each for FUZZ_SECONDS (60)
# from its seeds tests/fuzz/corpus_NAME; `make fuzz-build` only builds;
# `make fuzz-seeds` runs each over its seeds once.
FUZZ_NAMES := message sse config mcp_config mcp_wire rss ecb_csv keys theme \
              serve_request serve_agents serve_tokens serve_limits serve_convlog \
              serve_headers nats review_request review_tools events mcp_server pct
FUZZ_DIR   := build/fuzz
FUZZ_SAN   := -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS = $(CSTD) -O1 -g -fno-omit-frame-pointer $(FUZZ_SAN) -I. $(PKG_CFLAGS)
FUZZ_BINS  := $(FUZZ_NAMES:%=$(FUZZ_DIR)/fuzz_%)
FUZZ_OBJ   := $(LIB_OBJ:$(BUILD)/%=$(FUZZ_DIR)/obj/%)

$(FUZZ_DIR)/obj/%.o: %.c $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<

$(FUZZ_DIR)/libmadf.a: $(FUZZ_OBJ)
	@rm -f $@
	$(call say,AR,$@)ar rcs $@ $^

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_util.h $(FUZZ_DIR)/libmadf.a
	$(call say,CCLD,$@)clang $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_DIR)/libmadf.a $(LIBS)

# The analyzers fuzz_review_tools runs: its input as their output.
$(FUZZ_DIR)/tool_out: tests/fuzz/tool_out.c
	@mkdir -p $(dir $@)
	$(call say,CCLD,$@)$(CC) $(CSTD) -O2 -o $@ $<

$(FUZZ_DIR)/fuzz_review_tools: $(FUZZ_DIR)/tool_out

fuzz-build: $(FUZZ_BINS)

fuzz-seeds: fuzz-build
	@sh tests/fuzz/run.sh seeds $(FUZZ_NAMES)

fuzz: fuzz-build
	@FUZZ_SECONDS=$${FUZZ_SECONDS:-60} sh tests/fuzz/run.sh fuzz $(FUZZ_NAMES)

install: madf
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(DATADIR)/themes
	install -m 755 madf $(DESTDIR)$(BINDIR)/madf
	install -m 644 man/*.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 man/*.5 $(DESTDIR)$(MANDIR)/man5/
	if ls themes/*.theme >/dev/null 2>&1; then install -m 644 themes/*.theme $(DESTDIR)$(DATADIR)/themes/; fi

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/madf $(DESTDIR)$(MANDIR)/man1/madf.1 $(DESTDIR)$(MANDIR)/man5/madf-messages.5
	rm -rf $(DESTDIR)$(DATADIR)

clean:
	rm -rf build/rel build/san build/fuzz madf
