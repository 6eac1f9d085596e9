# The stages of .ci/run as one GNU make graph: `make -f .ci/stages.mk -j2`
# (.ci/run: -j$(nproc), two on CI) runs two stages at a time, and their builds
# share make's two job slots (the `+` marks each recipe as recursive, so the
# `make` under `cmake --build` takes its parallel jobs from the same
# jobserver: no more build jobs than cores, and a stage's build uses both
# cores once the other stage is done; ctest and the compilers that tests run
# are outside the jobserver), so no core idles at the tail of a build or of a
# ctest while another stage has work.
#
# Order: when a slot frees, make starts the first stage in `all`'s list whose
# prerequisites are done, so the long stages come first and the short bare-metal
# presets last. The two 60 s fuzz runs come after every other stage, side by
# side with nothing else, so each has a whole core as before (libFuzzer's
# budget is wall time); if a stage failed (.ci/run runs make -k), they do not
# run.
#
# Set by .ci/run: JOBS (ctest -j), CI_LOG_DIR and CI_T0 (for .ci/stage),
# ARM_STATUS (the file where the background install of the cross packages
# writes its exit status) and ARM_PID (that install's process).
SHELL := /bin/bash
STAGE := .ci/stage
JOBS ?= 2
# ctest without make's jobserver variables (the tests that build a project run
# their own make, as when ctest runs alone)
CTEST := env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL ctest

baremetal := cortex-m55 cortex-m4f cortex-m7 cortex-m3
cross := armhf aarch64 armv7-vfpv3
others := default clang-sanitize $(cross) bench $(baremetal)
.PHONY: all fuzz $(others)
all: $(others) fuzz

# The README's two test commands: the quick check (build and test presets
# quick: test_conformance and the contract tests), then the whole host suite
# (which runs those 11 tests again, a fraction of a second).
default:
	+@$(STAGE) $@ "g++: the README's test commands, the quick check and the whole host suite (presets quick, default)" \
	  'cmake --preset default && cmake --build --preset quick && $(CTEST) --preset quick -j$(JOBS) && cmake --build --preset default && $(CTEST) --preset default -j$(JOBS)'

# (Test preset clang-sanitize-no-fuzz: clang-sanitize's filter with the label
# fuzz excluded too; a command-line -LE would not replace a preset's filter.)
clang-sanitize:
	+@$(STAGE) $@ "clang++ ASan+UBSan: the Catch2 tests and the build checks (preset clang-sanitize)" \
	  'cmake --preset clang-sanitize && cmake --build --preset clang-sanitize && $(CTEST) --preset clang-sanitize-no-fuzz -j$(JOBS)'

fuzz: $(others)
	@$(STAGE) $@ "libFuzzer: the safetensors loader and the mha::dynamic API, 60 s each, side by side (preset clang-sanitize)" \
	  '$(CTEST) --preset clang-sanitize-fuzz -j2'

bench:
	+@$(STAGE) $@ "benchmark suite builds (preset bench; not run: timings are not tests)" \
	  'cmake --preset bench && cmake --build --preset bench'

# The cross packages install in the background from the start of the run;
# the cross stages wait for them first (ARM_WAIT). (Not a make prerequisite:
# make starts the first stage in order whose prerequisites are done, and a
# stage held back by an unfinished one lets the stages after it go first.)
# ARM_PID: the background install (its status file is written last; if it is
# gone without one, the install died).
ARM_WAIT := while [[ ! -s $(ARM_STATUS) ]] && kill -0 $(ARM_PID) 2>/dev/null; do sleep 2; done; \
  rc=$$(cat $(ARM_STATUS) 2>/dev/null || echo "none: the install process died"); \
  echo "(cross packages: exit $$rc)"; [[ $$rc == 0 ]] &&

# The ARM Linux stages build and run what a target must prove (configure
# presets <stage>-conformance, MHA_TEST_SET=conformance: test_conformance,
# every kernel path and module kind on a handful of shapes, and the programs
# whose claims depend on the target; docs/ci.md, "Which check proves which
# claim"). The whole run-time suites stay presets aarch64, armhf and
# armv7-vfpv3.
target.aarch64 := AArch64 (aarch64-linux-gnu-g++, under qemu-aarch64)
target.armhf := ARMv7 NEON+VFPv4 hard float (arm-linux-gnueabihf-g++, under qemu-arm)
target.armv7-vfpv3 := ARMv7 without NEON, VFPv3-D16, no FMA (arm-linux-gnueabihf-g++, under qemu-arm)
$(cross):
	+@$(STAGE) $@ "$(target.$@): the per-target checks (preset $@-conformance)" \
	  '$(ARM_WAIT) cmake --preset $@-conformance && cmake --build --preset $@-conformance && $(CTEST) --preset $@-conformance -j$(JOBS)'

$(baremetal):
	+@$(STAGE) $@ "bare metal: $@ under qemu-system-arm (preset $@)" \
	  '$(ARM_WAIT) cmake --preset $@ && cmake --build --preset $@ && $(CTEST) --preset $@'
