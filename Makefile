# vmlet - one non-recursive Makefile.
#
#   make            build ./vmlet
#   make run        install deps, build, resolve the example VM and boot it
#                   with the probe guest (vmlet probe -f examples/vm); without
#                   a usable /dev/kvm, or KVM=nested, inside tests/nested's
#                   emulated host with a real KVM
#   make test       install deps, build, run every test (unit, conformance,
#                   boot/probe, sanitizer pass)
#   make check      clang-format, layering and cppcheck
#   make fuzz       build and run the libFuzzer targets (FUZZ_SECONDS=60)
#   make fuzz-targets  build them only (clang; build/fuzz/NAME)
#   make bench      run scripts/bench-*
#   make static     build ./vmlet-static (fully static, for a pod image)
#   make clean
#
# Variables: V=1 verbose; SAN=1 ASan+UBSan build (objects in build/san);
# FUZZ=1 clang build for the libFuzzer targets (objects in build/fuzz; see
# scripts/fuzz.sh); BUILD=dir object directory.

CC       ?= gcc
SAN      ?=
FUZZ     ?=
ifeq ($(FUZZ),1)
# its own objects whatever BUILD the environment has (make test exports it)
override BUILD := build/fuzz
CC       := clang
CFLAGS   ?= -O1 -g
else ifeq ($(SAN),1)
BUILD    ?= build/san
else
BUILD    ?= build
endif
PKGS     := yaml-0.1 json-c libseccomp libcap-ng
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

WARN     := -Wall -Wextra -Werror -Wshadow -Wpointer-arith -Wstrict-prototypes \
            -Wmissing-prototypes -Wformat=2 -Wundef -Wno-format-nonliteral
CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 $(WARN) -D_GNU_SOURCE -I. -MMD -MP $(PKG_CFLAGS) \
            -fstack-protector-strong
LDLIBS   := $(PKG_LIBS) -lpthread
ifeq ($(SAN),1)
CFLAGS   += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS  += -fsanitize=address,undefined
endif
# libFuzzer: the library is instrumented (fuzzer-no-link); each target
# tests/fuzz/NAME.c links it with libFuzzer's main as build/fuzz/NAME.
FUZZ_SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
ifeq ($(FUZZ),1)
CFLAGS   += -fsanitize=fuzzer-no-link $(FUZZ_SAN) -Wno-gnu-variable-sized-type-not-at-end
endif

# Freestanding guest code (firmware/): general-purpose registers only, no red
# zone, no libc: see docs/hosts.md for why.
FW_CC     := gcc
FW_CFLAGS := -std=gnu11 $(WARN) -O2 -g -ffreestanding -fno-builtin -nostdlib \
             -mgeneral-regs-only -mno-red-zone -fno-stack-protector -fno-pic \
             -fno-pie -mcmodel=small -fno-asynchronous-unwind-tables -I. -MMD -MP
FW_LDFLAGS := -nostdlib -static -no-pie -Wl,--build-id=none -Wl,-z,noexecstack \
              -Wl,-z,max-page-size=4096

ifneq ($(V),1)
Q := @
endif

# ---- sources --------------------------------------------------------------
SPEC_SRCS := $(sort $(wildcard spec/*.c))
ARCH_SRCS := $(sort $(wildcard arch/x86_64/*.c))
VMM_SRCS  := $(filter-out vmm/main.c,$(sort $(wildcard vmm/*.c vmm/*/*.c vmm/*/*/*.c)))
LIB_SRCS  := $(SPEC_SRCS) $(ARCH_SRCS) $(VMM_SRCS)
LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/%.o) $(BUILD)/gen/schema_table.o \
             $(BUILD)/gen/fields_table.o

FW_LIB_SRCS   := $(sort $(wildcard firmware/lib/*.c firmware/lib/*.S))
FW_PROBE_SRCS := $(sort $(wildcard firmware/probe/*.c firmware/probe/*.S))
FW_IMAGES     :=
ifneq ($(wildcard firmware/probe/probe.ld),)
FW_IMAGES     += probe
endif
FW_EFI_SRCS   := $(sort $(wildcard firmware/efi/*.c firmware/efi/*.S))
ifneq ($(wildcard firmware/efi/efi.ld),)
FW_IMAGES     += efi
endif

UNIT_SRCS := $(sort $(wildcard tests/unit/*_test.c))
UNIT_BINS := $(UNIT_SRCS:%.c=$(BUILD)/%)
TEST_LIB  := $(BUILD)/tests/lib/test.o $(BUILD)/tests/lib/qcow2_check.o

all: vmlet

# ---- host binary ----------------------------------------------------------
$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) -c -o $@ $<

# KubeVirt's API schema as a C table (spec/schema.h), generated from the
# swagger.json kept in spec/schema/ (never committed: it cannot drift).
SCHEMA_TABLE := build/gen/schema_table.c
$(SCHEMA_TABLE): spec/schema/swagger.json scripts/gen-schema-table
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  GEN     $@")
	$(Q)scripts/gen-schema-table spec/schema/swagger.json $@

$(BUILD)/gen/schema_table.o: $(SCHEMA_TABLE)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) -c -o $@ $<

# docs/fields.md (what vmlet does with each KubeVirt field) as a C table
# (spec/fields.h), checked against the schema on the way
FIELDS_TABLE := build/gen/fields_table.c
$(FIELDS_TABLE): docs/fields.md spec/schema/swagger.json scripts/gen-fields
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  GEN     $@")
	$(Q)scripts/gen-fields -o $@

$(BUILD)/gen/fields_table.o: $(FIELDS_TABLE)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) -c -o $@ $<

gen: $(SCHEMA_TABLE) $(FIELDS_TABLE)

$(BUILD)/libvmlet.a: $(LIB_OBJS)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/fw/blobs.o: $(FW_IMAGES:%=build/fw/%.elf) scripts/gen-blobs.sh
	@mkdir -p $(dir $@)
	$(Q)scripts/gen-blobs.sh $(FW_IMAGES) > $(BUILD)/fw/blobs.S
	$(Q)$(CC) -c -o $@ $(BUILD)/fw/blobs.S

VMLET_BIN := $(if $(filter build,$(BUILD)),vmlet,$(BUILD)/vmlet)
$(VMLET_BIN): $(BUILD)/vmm/main.o $(BUILD)/libvmlet.a $(BUILD)/fw/blobs.o
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

ifneq ($(VMLET_BIN),vmlet)
vmlet: $(VMLET_BIN)
endif

# ---- freestanding firmware (always built in build/fw, never sanitized) ----
build/fw/%.o: firmware/%.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FWCC    $<")
	$(Q)$(FW_CC) $(FW_CFLAGS) -c -o $@ $<
build/fw/%.o: firmware/%.S
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FWAS    $<")
	$(Q)$(FW_CC) $(FW_CFLAGS) -c -o $@ $<

build/fw/probe.elf: $(patsubst firmware/%,build/fw/%.o,$(basename $(FW_PROBE_SRCS) $(FW_LIB_SRCS))) firmware/probe/probe.ld
	@$(if $(Q),echo "  FWLD    $@")
	$(Q)$(FW_CC) $(FW_LDFLAGS) -T firmware/probe/probe.ld -o $@ $(filter %.o,$^)

# The EFI firmware takes only the lib members it uses (an archive), and is
# embedded stripped (build/fw/efi.full.elf keeps the symbols).
build/fw/libfw.a: $(patsubst firmware/%,build/fw/%.o,$(basename $(FW_LIB_SRCS)))
	$(Q)rm -f $@ && ar rcs $@ $^

build/fw/efi.elf: $(patsubst firmware/%,build/fw/%.o,$(basename $(FW_EFI_SRCS))) build/fw/libfw.a firmware/efi/efi.ld
	@$(if $(Q),echo "  FWLD    $@")
	$(Q)$(FW_CC) $(FW_LDFLAGS) -T firmware/efi/efi.ld -o build/fw/efi.full.elf $(filter %.o %.a,$^)
	$(Q)strip -o $@ build/fw/efi.full.elf

# ---- tests ----------------------------------------------------------------
$(BUILD)/tests/unit/%_test: $(BUILD)/tests/unit/%_test.o $(TEST_LIB) $(BUILD)/libvmlet.a $(BUILD)/fw/blobs.o
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

unit-tests: $(UNIT_BINS)

deps:
	@scripts/deps.sh

test: deps
	$(Q)$(MAKE) --no-print-directory vmlet unit-tests
	$(Q)$(MAKE) --no-print-directory SAN=1 unit-tests build/san/vmlet
	$(Q)VMLET=./vmlet VMLET_SAN=build/san/vmlet BUILD=$(BUILD) tests/run.sh

# without a usable /dev/kvm (or with KVM=nested) the probe runs inside
# tests/nested's emulated host, on its real KVM (scripts/run-example)
run: deps
	$(Q)$(MAKE) --no-print-directory vmlet
	$(Q)$(if $(KVM),KVM=$(KVM) )scripts/run-example

check: vmlet
	scripts/check-layering.sh
	scripts/check-links.sh $(BUILD)
	scripts/check-docs.py
	scripts/check-format.sh
	scripts/check-cppcheck.sh

# ---- fuzz targets (FUZZ=1: make FUZZ=1 fuzz-targets; scripts/fuzz.sh) ----
FUZZ_TARGETS := $(patsubst tests/fuzz/%.c,%,$(sort $(wildcard tests/fuzz/*_fuzz.c)))
ifeq ($(FUZZ),1)
$(BUILD)/%_fuzz: $(BUILD)/tests/fuzz/%_fuzz.o $(BUILD)/libvmlet.a $(BUILD)/fw/blobs.o
	@$(if $(Q),echo "  FUZZLD  $@")
	$(Q)$(CC) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $^ $(LDLIBS)
endif

fuzz-targets:
	$(Q)$(MAKE) --no-print-directory FUZZ=1 $(FUZZ_TARGETS:%=build/fuzz/%)

FUZZ_SECONDS ?= 60
fuzz:
	$(Q)scripts/fuzz.sh $(FUZZ_SECONDS)

bench: vmlet
	$(Q)for b in scripts/bench-*; do echo "== $$b"; $$b || exit 1; done

static:
	$(Q)$(MAKE) --no-print-directory BUILD=build/static vmlet-static

build/static/vmlet-static vmlet-static: $(BUILD)/vmm/main.o $(BUILD)/libvmlet.a $(BUILD)/fw/blobs.o
	$(Q)$(CC) -static -o vmlet-static $^ $(shell pkg-config --static --libs $(PKGS)) -lpthread

clean:
	rm -rf build vmlet vmlet-static

.PHONY: all deps test run check fuzz fuzz-targets bench static clean unit-tests gen
.SECONDARY:

# (not the fetched QEMU's tree, scripts/fetch-qemu-l0: its etc/*.d are no make rules)
-include $(shell find build -path build/qemu-l0 -prune -o -name '*.d' -type f -print 2>/dev/null)
