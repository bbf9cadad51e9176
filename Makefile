# tilec: plain make. `make` builds build/tilec, build/libtilec.a, build/libtilec.so and the tests.
#   make test      run all tests (unit, diagnostics, end to end)
#   make check     `make test`, then the same tests under ASan+UBSan (build-asan/)
#   make example   build and run one example
#   make fuzz      build the reader's libFuzzer target (clang) and run it for FUZZ_SECONDS
#   make bench     build and run the benchmarks
# BUILD=dir picks the output folder, so several builds can live side by side.
BUILD ?= build
CC ?= cc
OPT ?= -O2 -g
SAN ?=
override CFLAGS_ALL = -std=c11 -D_GNU_SOURCE -fvisibility=hidden -Wall -Wextra -Werror -Wshadow -Wno-missing-field-initializers \
  -Iinclude -Isrc -Itools -fPIC -MMD -MP $(OPT) $(SAN) $(CFLAGS)
LDLIBS = -ldl -lpthread -lm
# per-benchmark extra libraries
BENCH_LIBS_bench_cpu_gemm = -lopenblas

LIB_SRCS := $(sort $(shell find src -name '*.c'))
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
BENCH_SRCS := $(sort $(wildcard bench/bench_*.c))
BENCH_BINS := $(BENCH_SRCS:bench/%.c=$(BUILD)/bench/%)
HELPER_SRCS := $(sort $(wildcard tests/helpers/*.c))
HELPER_BINS := $(HELPER_SRCS:tests/helpers/%.c=$(BUILD)/tests/helpers/%)

.PHONY: all test check example fuzz bench bench-run deps clean install
all: $(BUILD)/tilec $(BUILD)/libtilec.a $(BUILD)/libtilec.so $(UNIT_BINS) $(HELPER_BINS)

deps:
	@sh tools/deps.sh

# Objects depend on the Makefile too: a change of flags (-fvisibility=hidden) rebuilds them.
$(BUILD)/obj/%.o: %.c Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

# The build id: a hash of the library's sources, part of every kernel cache key, so a rebuilt
# tilec never serves kernels an older code generator made (the version string alone would).
BUILD_ID := $(shell cat $(LIB_SRCS) $(sort $(shell find src -name '*.h' -o -name '*.def')) | sha256sum | cut -c1-16)
$(BUILD)/gen/build_id.txt: FORCE
	@mkdir -p $(dir $@)
	@echo $(BUILD_ID) >$@.tmp; cmp -s $@.tmp $@ || mv $@.tmp $@; rm -f $@.tmp
$(BUILD)/obj/src/compile_cache.o: $(BUILD)/gen/build_id.txt
$(BUILD)/obj/src/compile_cache.o: CFLAGS += -DTILEC_BUILD_ID='"$(BUILD_ID)"'
.PHONY: FORCE
FORCE:

$(BUILD)/libtilec.a: $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/libtilec.so: $(LIB_OBJS) tools/libtilec.map
	$(CC) -shared $(SAN) -Wl,--version-script=tools/libtilec.map -o $@ $(LIB_OBJS) $(LDLIBS)

TOOL_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(sort $(wildcard tools/*.c)))
$(BUILD)/tilec: $(TOOL_OBJS) $(BUILD)/libtilec.a
	$(CC) $(SAN) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(BUILD)/libtilec.a
	@mkdir -p $(dir $@)
	$(CC) $(SAN) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/helpers/%: $(BUILD)/obj/tests/helpers/%.o $(BUILD)/libtilec.a
	@mkdir -p $(dir $@)
	$(CC) $(SAN) -o $@ $^ $(LDLIBS)

$(BUILD)/bench/%: $(BUILD)/obj/bench/%.o $(BUILD)/libtilec.a
	@mkdir -p $(dir $@)
	$(CC) $(SAN) -o $@ $^ $(LDLIBS) $(BENCH_LIBS_$*)

test: deps all
	@sh tests/run.sh $(BUILD)

check:
	@sh tools/build.sh test

example:
	@sh tools/build.sh example

FUZZ_SECONDS ?= 60
# The library is archived so the target links only what it uses (the reader, the evaluator, the IR).
FUZZ_CFLAGS = -std=c11 -D_GNU_SOURCE -g -O1 -Iinclude -Isrc -MMD -MP -fsanitize=address,undefined
FUZZ_OBJS := $(LIB_SRCS:%.c=build-fuzz/obj/%.o)
build-fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@
build-fuzz/libtilec.a: $(FUZZ_OBJS)
	rm -f $@ && ar rcs $@ $^
fuzz: build-fuzz/libtilec.a
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer \
	  -o build-fuzz/fuzz_reader tests/fuzz/fuzz_reader.c build-fuzz/libtilec.a $(LDLIBS)
	mkdir -p build-fuzz/corpus && cp tests/fuzz/corpus/*.py examples/*.py tests/diag/*.py build-fuzz/corpus/ 2>/dev/null || true
	build-fuzz/fuzz_reader -max_total_time=$(FUZZ_SECONDS) -max_len=8192 build-fuzz/corpus $(FUZZ_SEEDS)

bench:
	@sh tools/deps.sh bench
	@$(MAKE) --no-print-directory bench-run

bench-run: all $(BENCH_BINS)
	@for b in $(BENCH_BINS); do echo "== $$b"; $$b || exit 1; done

# make install [PREFIX=/usr/local] [DESTDIR=...]: the CLI, both libraries, the header and a
# pkg-config file (tilec.h includes <dlpack/dlpack.h>: Debian's libdlpack-dev).
PREFIX ?= /usr/local
VERSION := $(shell sed -n 's/^\#define TILEC_VERSION_STRING "\(.*\)"/\1/p' include/tilec.h)
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include
	install -m 755 $(BUILD)/tilec $(DESTDIR)$(PREFIX)/bin/tilec
	install -m 644 $(BUILD)/libtilec.a $(DESTDIR)$(PREFIX)/lib/libtilec.a
	install -m 755 $(BUILD)/libtilec.so $(DESTDIR)$(PREFIX)/lib/libtilec.so
	install -m 644 include/tilec.h $(DESTDIR)$(PREFIX)/include/tilec.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' tools/tilec.pc.in >$(DESTDIR)$(PREFIX)/lib/pkgconfig/tilec.pc

clean:
	rm -rf build build-asan build-tsan build-fuzz

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
-include $(shell find build-fuzz -name '*.d' 2>/dev/null)
