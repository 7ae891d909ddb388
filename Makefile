# usercopy-lab: patches -> kernel -> initramfs -> boot -> capture -> match -> report
#
#   make            build everything and run the whole trigger suite
#   make test       harness unit tests + the whole booted suite
#   make help       everything else

PYTHON      ?= /usr/bin/python3
TARBALL     ?= /usr/src/linux-source-6.1.tar.xz
BUILD       ?= build
RESULTS     ?= results
JOBS        ?= $(shell nproc)
TRIGGER     ?=
SUITE       ?= default
CMDLINE     ?=

# BUILD may be relative or absolute; kbuild's O= and the booted tests get it
# absolute from here.
BUILD_ABS   := $(abspath $(BUILD))
TREE        := $(BUILD)/linux-source-6.1
INITRAMFS   := $(BUILD)/initramfs.cpio
HELPERS_OUT := $(BUILD)/initramfs-helpers
# Data files of the guest (/data/NAME): the XFS image of the xfs check.
DATA_OUT    := $(BUILD)/initramfs-data
XFS_IMAGE   := $(DATA_OUT)/xfs-seed009.img.gz
GEN_CPIO    := $(BUILD)/gen_init_cpio
# Kernel variants: build/kernel-lab = lab.config alone (suite lab);
# build/kernel-NAME = lab.config + kernel-config/variant-NAME.config.
# `make kernels` builds the ones the suites of make and make test boot
# (seeds, slab: suites.toml); OPTIONAL_VARIANTS only when asked for (make
# kernel KERNEL=NAME, make suite-lab, suite-module, suite-nosplit-kconfig,
# make hunt, make suite-anybus).
ALL_VARIANTS := lab \
	$(patsubst kernel-config/variant-%.config,%,$(wildcard kernel-config/variant-*.config))
OPTIONAL_VARIANTS := lab module hunt nosplit kasan anybus
KERNEL_VARIANTS := $(filter-out $(OPTIONAL_VARIANTS),$(ALL_VARIANTS))
KERNEL      ?= seeds
HELPER_SRCS := $(wildcard initramfs-src/*.c)
HARNESS     := $(PYTHON) -m usercopy_lab
export PYTHONPATH := $(CURDIR)/harness

.PHONY: all suite test tests-beside-kernels unit-test booted-test deps tree kernel kernels initramfs boot bench \
	series series-export series-check series-vmalloc-proof mutation-demo whitelist-values mutation-rds clean distclean help syzkaller-corpus \
	results-check lava lava-run lava-farm shell soak fuzz-inputs arch-deps suite-arch \
	modules-cpio suite-module suite-nosplit-kconfig suite-lab suite-kasan suite-kasan-tags

all: suite

# One recipe at a time, also under `make -j`: the harness runs its own
# guests N at a time (run -j, default = cores), so two suites' recipes at
# once would oversubscribe the cores and push guests into their timeouts;
# a kernel build already runs on $(JOBS) cores inside kbuild, whose
# sub-make is not affected by this.  More parallel kernel builds: JOBS=N.
.NOTPARALLEL:

help:
	@echo "make                 build kernels + initramfs, run every suite, print results"
	@echo "make test            unit tests (real captured logs) + the whole booted suite"
	@echo "make unit-test       harness unit tests + lkdtm patch consistency (no kernel, no QEMU)"
	@echo "make fuzz-inputs     hostile inputs as subprocesses: exit status, < 10 s of CPU, < 200 MB each"
	@echo "make kernel          build one kernel variant (KERNEL=$(KERNEL); have: $(ALL_VARIANTS))"
	@echo "make kernels         build the kernels make and make test boot ($(KERNEL_VARIANTS))"
	@echo "make initramfs       build the guest userland ($(INITRAMFS))"
	@echo "make suite-arch ARCH=X  the default triggers on another arch's guest (have: $(ARCHES))"
	@echo "make suite-module    the default triggers with LKDTM built as a module (insmod in the guest), the seed triggers loading theirs"
	@echo "make suite-nosplit-kconfig  the nosplit triggers on a kernel built without the split"
	@echo "make suite-lab       the default triggers on the kernel of lab.config alone (build/kernel-lab)"
	@echo "make suite-kasan     the default triggers and checks on the seeds kernel under KASAN"
	@echo "make suite-kasan-tags  the vmalloc triggers on arm64 under software tag-based KASAN"
	@echo "make whitelist-values the seed regions' offsetof/sizeof, compiled in the seeds build"
	@echo "make boot TRIGGER=X  boot one fresh guest for trigger X, console shown live (SUITE=$(SUITE))"
	@echo "make shell           a shell in a lab guest (KERNEL=$(KERNEL) CMDLINE=...; Ctrl-A X quits)"
	@echo "make lava            one LAVA job per trigger and check in $(BUILD)/lava/, checked by lava-common"
	@echo "make lava-run        SUITE=$(SUITE) through lava-run here (LAVA_KERNEL=IMAGE: another kernel)"
	@echo "make lava-farm       SUITE=$(SUITE) through lava-server + 2 lava-workers on loopback, then gone"
	@echo "make triage LOGS=..  classify/dedup reports in captured logs (see README)"
	@echo "make syzkaller-corpus SYZKALLER_CORPUS=dir  triage vs syzkaller's report corpus"
	@echo "make corpora         fetch the triage corpora into build/corpora (needs github.com)"
	@echo "make mail-corpus     triage titles vs syzbot's mails (build/corpora/mail)"
	@echo "make series-check    apply+build+checkpatch every prefix of patches/series, then the build matrix"
	@echo "make series-export   export the series and the two fixes (0001, 0010) alone, check git am + build"
	@echo "make series-vmalloc-proof  patches/0001 on an SMP kernel: guard-less copies pass, the old bound BUGs"
	@echo "make mutation-demo   boot a test-only kernel mutation; its triggers must FAIL"
	@echo "make mutation-rds    the seeds kernel without the RDS regions: the RDS probes must oops"
	@echo "make gaps            static gap finder: copy sites vs cache regions, 6.1 trees (make gaps-test: recall)"
	@echo "make results-check   the last run's KTAP (tree's kunit.py) and JUnit vs results.json"
	@echo "make hunt HUNT_MINUTES=60 HUNT_JOBS=2  trinity/stress-ng/selftests in fallback guests (docs/hunt.md)"
	@echo "make hunt-replay RUN=.. FINDING=..  boot a hunt's recorded guest again; hunt-harvest RUN=.. re-judges"
	@echo "make bench           speed (snapshot vs full, -j), in-guest hardening cost, triage MB/s"
	@echo "make soak N=20       run the suites N times, count verdicts per trigger, fail on a flake"
	@echo "make clean           remove kernel build outputs (keeps the extracted tree, ccache)"
	@echo "make distclean       remove build/ and results/"

deps:
	@scripts/install-deps.sh

# What the arch kernels and guests need besides `deps`: the cross compilers
# (kernel and static helpers), their libcs, and qemu-system-aarch64.  The
# other arches' busybox is fetched by scripts/arch-busybox.sh.
ARCH_DEPS := qemu-system-arm gcc-aarch64-linux-gnu libc6-dev-arm64-cross \
	gcc-i686-linux-gnu libc6-dev-i386-cross
arch-deps: deps
	@scripts/install-deps.sh --only $(ARCH_DEPS)

# Re-extracts and re-applies the series only when the tarball or a series
# file changed (hash stamp); otherwise a no-op, so kbuild stays incremental.
tree: deps
	@scripts/prepare-tree.sh $(TARBALL) $(TREE) patches

# What reads the tree (kernel-config.sh, kbuild) holds $(TREE).lock shared;
# prepare-tree.sh takes it exclusively before it re-extracts the tree, so it
# waits for a build that another make runs in the same BUILD instead of
# deleting the sources under it.
TREE_READ = flock -s $(TREE).lock

# PREBUILT=1: the kernels are already in $(BUILD)/kernel-NAME (e.g. left
# there by `scripts/series-check.sh --keep $(BUILD)`, whose matrix rows 50,
# a0 and b0 are the module, i386 and arm64 kernels): no kbuild, the image
# must exist.  For make suite-module / suite-arch after a series-check.
PREBUILT ?=
define prebuilt_image
	@[ -f $(1) ] || { echo "PREBUILT: $(1) missing (series-check --keep $(BUILD)?)"; exit 1; }
	@echo "kernel: $(1) (prebuilt: $$(cat $(dir $(1))/../../../.series-check-row 2>/dev/null | head -n 1))"
endef

# An x86-64 kernel variant NAME ($(1)): its .config, then kbuild (bzImage,
# and the modules when the variant builds any as =m).
# A warm build skips kernel-config.sh and kbuild's no-op pass (~10-20 s a
# kernel) when scripts/build-stamp.py proves that nothing they read changed
# since the last successful build: the tree stamp (tarball + series) and
# its mtime, no file in the tree newer than the stamp, the fragments and
# config scripts, the .config, the kbuild command and compiler, and the
# bzImage itself.  KBUILD_FORCE=1 runs kbuild anyway.
KBUILD_FORCE ?=
KBUILD_CC   := ccache gcc
# ccache's depend mode, for every compiler make starts: on a miss the
# default mode also runs the preprocessor to hash its output, so a cold
# cache (a clean clone's or CI's: every object a miss) cost 40 % more
# than no ccache at all; in depend mode a miss compiles once and hashes
# the headers kbuild's -MMD file lists.  fs/ of the lab kernel, 91
# objects, -j2: gcc 44 s, ccache miss 56 s, depend-mode miss 45 s,
# depend-mode hit 14 s (docs/history.md).  CCACHE_DEPEND=1 means depend mode whatever
# its value, so `make CCACHE_DEPEND_MODE=0` is the way back to the default.
CCACHE_DEPEND_MODE ?= 1
ifeq ($(CCACHE_DEPEND_MODE),1)
export CCACHE_DEPEND := 1
endif
# The fragments merged after lab.config into kernel variant NAME: its
# FRAGMENTS_NAME when set, else kernel-config/variant-NAME.config.
FRAGMENTS_kasan := kernel-config/variant-seeds.config kernel-config/variant-kasan.config
variant_fragments = $(or $(FRAGMENTS_$(1)),$(wildcard kernel-config/variant-$(1).config))
define kbuild_stamp_inputs
	--file $(TREE).stamp --stat $(TREE).stamp --tree $(TREE) \
	--file kernel-config/lab.config $(foreach f,$(call variant_fragments,$(1)),--file $(f)) \
	--file scripts/kernel-config.sh --file scripts/kconfig-lib.sh \
	--stat $(BUILD)/kernel-$(1)/.config --stat $(BUILD)/kernel-$(1)/arch/x86/boot/bzImage \
	--text "CC=$(KBUILD_CC) $$(gcc --version | head -n 1)"
endef
ifeq ($(PREBUILT),)
define x86_kernel_build
	+@if [ -z "$(KBUILD_FORCE)" ] && why=$$(scripts/build-stamp.py check \
		$(BUILD)/kernel-$(1)/.lab-build-stamp $(call kbuild_stamp_inputs,$(1))); then \
		echo "kernel: $(BUILD)/kernel-$(1) up to date (build stamp; KBUILD_FORCE=1 runs kbuild)"; \
		exit 0; fi; \
	echo "kernel $(1): kbuild runs ($$why)"; \
	rm -f $(BUILD)/kernel-$(1)/.lab-build-stamp; \
	$(TREE_READ) scripts/kernel-config.sh $(TREE) $(BUILD)/kernel-$(1) kernel-config/lab.config \
		$(call variant_fragments,$(1)) && \
	scripts/kbuild-progress.py $(1) $(BUILD_ABS)/kernel-$(1) -- $(TREE_READ) $(MAKE) --no-print-directory \
		-C $(TREE) O=$(BUILD_ABS)/kernel-$(1) CC="$(KBUILD_CC)" -j$(JOBS) bzImage \
		`grep -qx 'CONFIG_[A-Z0-9_]*=m' $(BUILD)/kernel-$(1)/.config && echo modules` && \
	scripts/build-stamp.py write $(BUILD)/kernel-$(1)/.lab-build-stamp $(call kbuild_stamp_inputs,$(1)) && \
	echo "kernel: $(BUILD)/kernel-$(1)/arch/x86/boot/bzImage"
endef
else
x86_kernel_build = $(call prebuilt_image,$(BUILD)/kernel-$(1)/arch/x86/boot/bzImage)
endif

$(BUILD)/kernel-%/arch/x86/boot/bzImage: tree FORCE
	$(if $(filter $*,$(ALL_VARIANTS)),,$(error kernel-$*: not a kernel variant ($(ALL_VARIANTS)); lab.config alone is "lab"))
	$(call x86_kernel_build,$*)
# Made through a pattern (modules.cpio's prerequisite) a kernel image is
# an intermediate file that make would delete after its first use.
.PRECIOUS: $(BUILD)/kernel-%/arch/x86/boot/bzImage

# A kernel's modules as a newc archive that follows the shared initramfs in
# a modules suite's guests (suites.toml modules = true): LKDTM's module.
MODULES_KO := drivers/misc/lkdtm/lkdtm.ko
$(BUILD)/kernel-%/modules.cpio: $(BUILD)/kernel-%/arch/x86/boot/bzImage $(GEN_CPIO)
	@scripts/modules-cpio.sh $(GEN_CPIO) $(BUILD)/kernel-$* $@ $(MODULES_KO)

# MODULE_SET=lkdtm (the default) or installed: the archive of that name below.
MODULE_SET ?= lkdtm
modules-cpio: $(BUILD)/kernel-$(KERNEL)/$(if $(filter installed,$(MODULE_SET)),modules-installed.cpio,modules.cpio)

# Every module of the kernel installed as a distribution installs them
# (suites.toml modules = "installed"): lib/modules/RELEASE with modules.dep
# from `make modules_install` (stripped; depmod runs there), busybox as
# /sbin/modprobe, LKDTM insmodded by init as above.
$(BUILD)/kernel-%/modules-installed.cpio: $(BUILD)/kernel-%/arch/x86/boot/bzImage $(GEN_CPIO)
	@rm -rf $(BUILD)/kernel-$*/modules-root
	@$(TREE_READ) $(MAKE) --no-print-directory -s -C $(TREE) O=$(BUILD_ABS)/kernel-$* \
		INSTALL_MOD_PATH=$(BUILD_ABS)/kernel-$*/modules-root INSTALL_MOD_STRIP=1 modules_install
	@scripts/modules-cpio.sh --root $(BUILD)/kernel-$*/modules-root $(GEN_CPIO) $(BUILD)/kernel-$* $@ $(MODULES_KO)

# Kernels for other architectures (docs/arches.md): build/kernel-ARCH/ from
# lab.config + kernel-config/arch-ARCH.config, merged onto `make ARCH=...
# tinyconfig`; each with its kbuild ARCH, compiler and boot image.  Not in
# `make kernels` (the arch suites run behind `make suite-arch`).
ARCHES          := $(patsubst kernel-config/arch-%.config,%,$(wildcard kernel-config/arch-*.config))
KARCH_i386      := i386
KCROSS_i386     :=
KCC_i386        := ccache gcc
KTARGET_i386    := bzImage
KIMAGE_i386     := arch/x86/boot/bzImage
HOSTCC_i386     := i686-linux-gnu-gcc
KARCH_arm64     := arm64
KCROSS_arm64    := aarch64-linux-gnu-
KCC_arm64       := ccache aarch64-linux-gnu-gcc
KTARGET_arm64   := Image
KIMAGE_arm64    := arch/arm64/boot/Image
HOSTCC_arm64    := aarch64-linux-gnu-gcc
ARCH_IMAGES     := $(foreach a,$(ARCHES),$(BUILD)/kernel-$(a)/$(KIMAGE_$(a)))

# arch_kernel NAME,ARCH,FRAGMENTS: build/kernel-NAME/ for ARCH from
# lab.config + arch-ARCH.config + FRAGMENTS.  arm64-kasan: the arm64 kernel
# under software tag-based KASAN (kernel-config/kasan-sw-tags.config), whose
# pointers carry a tag in their top byte (make suite-kasan-tags).
ifneq ($(PREBUILT),)
define arch_kernel
$(BUILD)/kernel-$(1)/$(KIMAGE_$(2)): FORCE
	$(call prebuilt_image,$(BUILD)/kernel-$(1)/$(KIMAGE_$(2)))
endef
else
define arch_kernel
$(BUILD)/kernel-$(1)/$(KIMAGE_$(2)): arch-deps tree FORCE
	@ARCH=$(KARCH_$(2)) CROSS_COMPILE=$(KCROSS_$(2)) $(TREE_READ) scripts/kernel-config.sh $(TREE) \
		$(BUILD)/kernel-$(1) kernel-config/lab.config kernel-config/arch-$(2).config $(3)
	+@scripts/kbuild-progress.py $(1) $(BUILD_ABS)/kernel-$(1) -- $(TREE_READ) $(MAKE) --no-print-directory \
		-C $(TREE) O=$(BUILD_ABS)/kernel-$(1) ARCH=$(KARCH_$(2)) \
		CROSS_COMPILE=$(KCROSS_$(2)) CC="$(KCC_$(2))" -j$(JOBS) $(KTARGET_$(2))
	@echo "kernel: $$@"
endef
endif
$(foreach a,$(ARCHES),$(eval $(call arch_kernel,$(a),$(a))))
$(eval $(call arch_kernel,arm64-kasan,arm64,kernel-config/kasan-sw-tags.config))

# The hunt kernel (make hunt, docs/hunt.md) is the seeds kernel plus
# variant-hunt.config: three fragments, and not one of `make kernels`.
# It has no DWARF: the coverage probe's two offsets are compiled against
# the build after each link (scripts/probe-offsets.sh -> probe-offsets.txt).
$(BUILD)/kernel-hunt/arch/x86/boot/bzImage: tree FORCE
	@$(TREE_READ) scripts/kernel-config.sh $(TREE) $(BUILD)/kernel-hunt kernel-config/lab.config \
		kernel-config/variant-seeds.config kernel-config/variant-hunt.config
	+@scripts/kbuild-progress.py hunt $(BUILD_ABS)/kernel-hunt -- $(TREE_READ) $(MAKE) --no-print-directory \
		-C $(TREE) O=$(BUILD_ABS)/kernel-hunt CC="ccache gcc" -j$(JOBS) bzImage
	@scripts/probe-offsets.sh $(BUILD)/kernel-hunt >/dev/null
	@echo "kernel: $@"

kernel: $(BUILD)/kernel-$(KERNEL)/arch/x86/boot/bzImage
kernels: $(foreach v,$(KERNEL_VARIANTS),$(BUILD)/kernel-$(v)/arch/x86/boot/bzImage)

$(GEN_CPIO): tree
	@mkdir -p $(BUILD)
	@[ $@ -nt $(TREE)/usr/gen_init_cpio.c ] || cc -O2 -o $@ $(TREE)/usr/gen_init_cpio.c

$(HELPERS_OUT)/%: initramfs-src/%.c $(wildcard initramfs-src/*.h)
	@mkdir -p $(HELPERS_OUT)
	cc -static -O2 -Wall -Wextra -Werror -o $@ $<

# The XFS image of initramfs-src/check-xfs-inline.c (seed 009).
$(XFS_IMAGE): scripts/xfs-image.sh | deps
	@scripts/xfs-image.sh $@

initramfs: deps $(GEN_CPIO) $(patsubst initramfs-src/%.c,$(HELPERS_OUT)/%,$(HELPER_SRCS)) \
		$(XFS_IMAGE)
	@mkdir -p $(HELPERS_OUT)
	@scripts/build-initramfs.sh $(GEN_CPIO) $(INITRAMFS) $(HELPERS_OUT) $(TREE) $(DATA_OUT)

# The userland of another arch's guests, build/initramfs-ARCH.cpio: Debian's
# busybox-static of that arch (scripts/arch-busybox.sh), the same init, and
# the check programs cross-built static with HOSTCC_ARCH (their kernel
# layouts come from the arch's compiler and the guest: kernel-layout.h).
# No data files and no selftests runner (the arch suites run neither).
ARCH_HELPERS := $(patsubst initramfs-src/%.c,%,$(HELPER_SRCS))

define arch_initramfs
$(BUILD)/initramfs-helpers-$(1)/%: initramfs-src/%.c $(wildcard initramfs-src/*.h) | arch-deps
	@mkdir -p $$(@D)
	$(HOSTCC_$(1)) -static -O2 -Wall -Wextra -Werror -o $$@ $$<

$(BUILD)/arch-$(1)/busybox: scripts/arch-busybox.sh | arch-deps
	@scripts/arch-busybox.sh $(1) $$@

initramfs-$(1): arch-deps $(GEN_CPIO) $(BUILD)/arch-$(1)/busybox \
		$(foreach h,$(ARCH_HELPERS),$(BUILD)/initramfs-helpers-$(1)/$(h))
	@BUSYBOX=$(BUILD)/arch-$(1)/busybox scripts/build-initramfs.sh $(GEN_CPIO) \
		$(BUILD)/initramfs-$(1).cpio $(BUILD)/initramfs-helpers-$(1)
endef
$(foreach a,$(ARCHES),$(eval $(call arch_initramfs,$(a))))
.PHONY: $(foreach a,$(ARCHES),initramfs-$(a))

# The seeds suite's whitelist audit computes these itself when they are
# missing or stale (the compiler in each unit of the seeds build: it has no
# DWARF); this target only shows them (and caches them).
whitelist-values: $(BUILD)/kernel-seeds/arch/x86/boot/bzImage
	$(HARNESS) audit values expected-oops/seeds/slab-audit.toml \
		--vmlinux $(BUILD)/kernel-seeds/vmlinux --cache $(BUILD)/kernel-seeds/whitelist-values.json

suite: kernels initramfs
	$(HARNESS) run --build-dir $(BUILD) --initramfs $(INITRAMFS) --results $(RESULTS)

boot: initramfs
	@[ -n "$(TRIGGER)" ] || { echo "usage: make boot TRIGGER=NAME [SUITE=$(SUITE)]"; exit 2; }
	+kernel=$$($(HARNESS) suite-kernel "$(SUITE)") && $(MAKE) kernel KERNEL="$$kernel"
	$(HARNESS) run --build-dir $(BUILD) --initramfs $(INITRAMFS) --results $(RESULTS) \
		--suite "$(SUITE)" --trigger "$(TRIGGER)" --live --boot full

# One arch's suite (suites.toml [ARCH]: the default suite's triggers on an
# i386 or arm64 guest; docs/arches.md), with its kernel and initramfs.
# Not part of `make test`: each arch kernel is one more cold kernel build.
ARCH ?= arm64
suite-arch:
	@case " $(ARCHES) " in *" $(ARCH) "*) ;; \
	*) echo "usage: make suite-arch ARCH=NAME (have: $(ARCHES))"; exit 2 ;; esac
	+$(MAKE) --no-print-directory $(BUILD)/kernel-$(ARCH)/$(KIMAGE_$(ARCH)) initramfs initramfs-$(ARCH)
	$(HARNESS) run --build-dir $(BUILD) --initramfs $(INITRAMFS) --results $(RESULTS) \
		--suite $(ARCH)

# LKDTM as a module (suites.toml [module]): the module kernel, its modules
# archive, then every default trigger with lkdtm.ko insmodded by init and
# the seed subsystems' modules absent; then [module-seeds], the seed
# triggers with every module installed and a modprobe for request_module().
# Not part of `make test`: one more cold kernel (MODULES=y is a global change).
suite-module: $(BUILD)/kernel-module/modules.cpio $(BUILD)/kernel-module/modules-installed.cpio initramfs
	$(HARNESS) run --build-dir $(BUILD) --initramfs $(INITRAMFS) --results $(RESULTS) \
		--suite module --suite module-seeds

# The default suite's triggers and checks on the seeds kernel under generic
# KASAN (suites.toml [kasan]): no console may hold a KASAN report.  Not part
# of `make test`: one more cold kernel (docs/suites.md says what it costs).
suite-kasan: $(BUILD)/kernel-kasan/arch/x86/boot/bzImage initramfs
	$(HARNESS) run --build-dir $(BUILD) --initramfs $(INITRAMFS) --results $(RESULTS) \
		--suite kasan

# The vmalloc triggers on an arm64 guest under software tag-based KASAN
# (suites.toml [arm64-kasan]): patches/0001's bound with tagged pointers.
suite-kasan-tags: $(BUILD)/kernel-arm64-kasan/$(KIMAGE_arm64) initramfs initramfs-arm64
	$(HARNESS) run --build-dir $(BUILD) --initramfs $(INITRAMFS) --results $(RESULTS) \
		--suite arm64-kasan

# The default suite's triggers on the kernel of lab.config alone
# (suites.toml [lab]; `make test` boots them on the seeds kernel).  Not
# part of `make test`: one more cold kernel.
suite-lab: $(BUILD)/kernel-lab/arch/x86/boot/bzImage initramfs
	$(HARNESS) run --build-dir $(BUILD) --initramfs $(INITRAMFS) --results $(RESULTS) \
		--suite lab

# The nosplit suite's triggers on a kernel with the split compiled out
# (suites.toml [nosplit-kconfig]; `make test` turns it off at boot instead,
# [nosplit]).  Not part of `make test`: one more cold kernel.
suite-nosplit-kconfig: $(BUILD)/kernel-nosplit/arch/x86/boot/bzImage initramfs
	$(HARNESS) run --build-dir $(BUILD) --initramfs $(INITRAMFS) --results $(RESULTS) \
		--suite nosplit-kconfig

triage:
	@[ -n "$(LOGS)" ] || { echo "usage: make triage LOGS='file-or-dir ...'"; exit 2; }
	$(HARNESS) triage $(LOGS)

# The triage corpora (syzkaller's report corpus, syzbot's mails from public
# list mirrors) into build/corpora, where `make test` and `make bench` find
# them; needs a network that reaches github.com (~2 GB of mirrors), or
# MIRRORS=DIR of local git mirrors (scripts/fetch-corpora.sh says how).
.PHONY: corpora mail-corpus
CORPORA ?= build/corpora
corpora:
	scripts/fetch-corpora.sh $(CORPORA)

# Titles of the mail corpus against syzbot's subjects (docs/triage.md).
mail-corpus:
	$(PYTHON) scripts/mail-corpus.py score --show 20 $(CORPORA)/mail

# Agreement with syzkaller's pkg/report/testdata/linux/report (a clone of
# google/syzkaller; not part of this repository).
syzkaller-corpus:
	@[ -n "$(SYZKALLER_CORPUS)" ] || { echo "usage: make syzkaller-corpus SYZKALLER_CORPUS=syzkaller/pkg/report/testdata/linux/report"; exit 2; }
	$(PYTHON) scripts/syzkaller-corpus.py --show 20 $(SYZKALLER_CORPUS)

# Needs no root when these are installed (the full `deps` list is for builds).
# USERCOPY_LAB_TREE: the KTAP test runs the tree's kunit.py parse (fails,
# not skips, when this tree exists and its kunit.py does not).  The tests run
# on JOBS workers (pytest-xdist): about 3 min on two (about 2400 tests; figures
# by date in docs/history.md).  UNIT_DEPS: every module the tests import, through the package
# that installs it (harness/tests/test_unit_deps.py checks the list against
# the sources): lava-common's schema (python3-voluptuous) checks the LAVA
# jobs, python3-junitparser reads the JUnit file; python3-jinja2 and
# python3-matplotlib make the results, hunt and bench pages (chromium, which
# the page's browser test needs, comes with `deps`, as in make test);
# python3-tabulate lays out the tables the lab prints, python3-psutil finds
# and ends processes (harness/tests/processes.py),
# python3-jsonschema checks results.json and suites.toml against their
# schemas (harness/usercopy_lab/schemas/).
UNIT_DEPS := python3 python3-pytest python3-pexpect python3-hypothesis python3-yaml \
	python3-pyelftools python3-pytest-xdist lava-common python3-voluptuous \
	python3-junitparser python3-jinja2 python3-matplotlib python3-tabulate python3-psutil \
	python3-jsonschema
unit-test:
	@scripts/install-deps.sh --only $(UNIT_DEPS)
	USERCOPY_LAB_TREE=$(abspath $(TREE)) $(PYTHON) -m pytest -q -n $(JOBS) harness/tests
	scripts/lkdtm-patch.sh --check
	LKDTM_PATCH=$(SERIES_612)/$(LKDTM_612) scripts/lkdtm-patch.sh --check

# Hostile inputs (harness/tests/hostile_inputs.toml, hostile_inputs.d/): each
# case runs the CLI as a subprocess in a throw-away lab (fake QEMU, nothing
# boots) and must exit with its status in under 10 s of its own CPU time (not
# wall time: it runs beside the kernel builds), under 200 MB peak RSS, with
# one stderr line; JOBS cases at once.
fuzz-inputs:
	$(PYTHON) harness/tests/hostile_inputs.py -j $(JOBS)

# On JOBS pytest-xdist workers: the equivalence test (three runs of the
# default suite, ~85 s) on one, the ten single-guest tests (~30 s) beside
# it on the other (issue #23).
booted-test: kernels initramfs
	USERCOPY_LAB_BUILD=$(BUILD_ABS) USERCOPY_LAB_INITRAMFS=$(abspath $(INITRAMFS)) \
		$(PYTHON) -m pytest -q -n $(JOBS) harness/booted_tests

# The unit tests and the hostile inputs (TESTS_BESIDE_KERNELS) run beside the
# kernel builds at nice 19 (scripts/beside.sh: they mostly take the core
# kbuild leaves idle; their output is kept in $(BUILD)/tests-beside-kernels.log
# and shown as they go once the kernels are built).  Then the booted harness
# checks, the suite, then the run's KTAP (through the tree's kunit.py) and
# JUnit against its results.json, then the RDS mutant (about a minute; its
# run is under $(MUTANT_RESULTS)/), then the hunt's smoke on the seeds
# kernel (its run is under $(RESULTS)/hunt-smoke/): $(RESULTS)/latest is
# the suite's run afterwards.
TESTS_BESIDE_KERNELS := unit-test fuzz-inputs
test: tests-beside-kernels booted-test suite results-check mutation-rds hunt-smoke

tests-beside-kernels: tree
	+@scripts/beside.sh $(BUILD)/tests-beside-kernels.log \
		"$(MAKE) --no-print-directory $(TESTS_BESIDE_KERNELS)" \
		$(MAKE) --no-print-directory kernels initramfs

results-check:
	$(HARNESS) check formats $(RESULTS)/latest \
		--kunit $(TREE)/tools/testing/kunit/kunit.py

# An interactive guest: busybox shell on the serial console, whole console
# logged under $(RESULTS)/shell/.
shell: initramfs
	+$(MAKE) kernel KERNEL=$(KERNEL)
	$(HARNESS) shell --kernel $(KERNEL) --cmdline "$(CMDLINE)" --build-dir $(BUILD) \
		--initramfs $(INITRAMFS) --results $(RESULTS)

# LAVA: neither `make` nor `make test` needs it (docs/lava.md).  `make lava`
# installs lava-common (apt) if missing, writes one job per trigger and check
# and validates each with lava-common's schema; `make lava-run` also installs
# lava-dispatcher and runs SUITE through lava-run on this machine, LAVA's own
# results against match and our runner (scripts/lava/run-suite.sh);
# LAVA_KERNEL=IMAGE boots every job on that kernel instead (a wrong kernel, a
# mutant), still judged by SUITE's golden files.  `make lava-farm` stands up
# lava-server, PostgreSQL and two lava-workers on loopback for one run of
# SUITE, submitted with lavacli, results from the REST API, then tears them
# down (scripts/lava/farm.sh).  Both scripts exit 0 only when LAVA, match (and
# our runner) agree and no job is FAIL or ERROR; 1 a FAIL or ERROR all agree on,
# 3 they differ, 2 no run (docs/lava.md); make reports any of those as its 2.
LAVA_OUT := $(BUILD)/lava
LAVA_KERNEL ?=
lava:
	@scripts/lava/apt-install.sh lava-common
	$(HARNESS) lava write --out $(LAVA_OUT) \
		--kernels file://$(BUILD_ABS) --initramfs file://$(abspath $(INITRAMFS))

lava-run: initramfs
	+$(if $(LAVA_KERNEL),,kernel=$$($(HARNESS) suite-kernel "$(SUITE)") && $(MAKE) kernel KERNEL="$$kernel")
	@scripts/lava/apt-install.sh lava-common lava-dispatcher
	scripts/lava/run-suite.sh $(BUILD) $(INITRAMFS) $(RESULTS) $(SUITE) $(LAVA_KERNEL)

lava-farm: initramfs
	+$(if $(LAVA_KERNEL),,kernel=$$($(HARNESS) suite-kernel "$(SUITE)") && $(MAKE) kernel KERNEL="$$kernel")
	scripts/lava/farm.sh $(BUILD) $(INITRAMFS) $(RESULTS) $(SUITE) $(LAVA_KERNEL)

# Numbers and ratios from one run, also written to $(RESULTS)/bench-<time>/;
# REBUILD=1 also times a warm kernel rebuild after a change to one patch;
# WARM=1 a warm `make test` with nothing changed, step by step (issue #23).
bench: kernels initramfs
	$(PYTHON) bench/bench.py --build-dir $(BUILD) --initramfs $(INITRAMFS) \
		--results $(RESULTS) -j $(JOBS) $(if $(REBUILD),--rebuild) $(if $(WARM),--warm-test)

# Every suite N times; per trigger its verdict counts; a verdict that differs
# between runs is a flake and fails.
N ?= 20
soak: kernels initramfs
	$(HARNESS) soak --runs $(N) --results $(RESULTS)/soak \
		--build-dir $(BUILD) --initramfs $(INITRAMFS) -j $(JOBS)

# Test-only kernel mutation (never part of the series) that the golden files
# must catch; see lkdtm-tests/mutations/README.md.  Mutant runs and runs
# against overlay golden folders write under $(MUTANT_RESULTS), with a
# latest of their own, so $(RESULTS)/latest stays the last full suite run
# (after make test too, which runs mutation-rds after the suites;
# harness/tests/test_front_door.py checks every such recipe).
MUTANT_RESULTS ?= $(RESULTS)/mutants
MUTATION ?= lkdtm-tests/mutations/mm-struct-window-shrink-by-8.patch
MUTATION_TRIGGERS ?= USERCOPY_WHITELIST_MM_STRUCT_TO USERCOPY_WHITELIST_MM_STRUCT_FROM
mutation-demo: kernel initramfs
	scripts/mutation-run.sh $(TREE) $(BUILD) $(INITRAMFS) $(MUTANT_RESULTS) $(MUTATION) $(MUTATION_TRIGGERS)

# The RDS regions taken back (rds_tcp_incoming: patches/0010; rds_ib_incoming:
# seed 011) in one mutant of the seeds kernel: each RDS probe must oops as
# its mutant golden file says (BUG in the seeds suite, WARNING in
# seeds-fallback), and the seeds suites' own golden files must FAIL.
RDS_MUTATIONS = lkdtm-tests/mutations/rds-tcp-incoming-no-region.patch,lkdtm-tests/mutations/rds-ib-incoming-no-region.patch
# Part of `make test`: about a minute on the 2-core lab host when the
# mutant is rebuilt (copy + rebuild of the seeds kernel's build folder, then
# four guests from snapshots), seconds when its build stamp holds.
mutation-rds: initramfs $(BUILD)/kernel-seeds/arch/x86/boot/bzImage
	scripts/mutation-run.sh --kernel seeds --suite seeds --suite seeds-fallback \
		--golden-overlay seeds=expected-oops/mutant-rds-no-region \
		--golden-overlay seeds-fallback=expected-oops/mutant-rds-no-region-fallback \
		$(TREE) $(BUILD) $(INITRAMFS) $(MUTANT_RESULTS) $(RDS_MUTATIONS) rds-tcp-cookie rds-ib-cookie

# Long: every prefix, then the build matrix (kernel-config/matrix/); never
# part of `make test`.  Costs in docs/series.md.
series-check: deps
	scripts/series-check.sh

# The cover letter + numbered series, and 0001 and 0010 as series of their
# own for their maintainers (build/series-out/); each applies alone to the
# pristine tree and builds.
series-export series: deps
	scripts/series-export.sh

# patches/0001 on vmap areas without a guard page.  The lab kernels are
# uniprocessor, whose per-cpu chunks are not vmalloc-backed: this builds the
# default configuration with SMP (kernel-config/matrix/90-smp.config) into
# $(VMALLOC_PROOF), runs the vmalloc triggers of [lab] (the suite of
# that configuration without SMP) on it against
# expected-oops/smp/ (no report for the guard-less copies, the BUG of
# USERCOPY_VMALLOC), then the same kernel with the first version's bound
# (lkdtm-tests/mutations/vmalloc-bound-by-get-vm-area-size.patch), whose
# per-cpu copies must BUG as expected-oops/mutant-vmalloc-old-bound/ says.
# CCACHE_BASEDIR= (ccache's base_dir off): with /etc/ccache.conf's
# base_dir, ccache hands gcc relative paths, -fmacro-prefix-map no longer
# strips them, and BUG() says "../linux-source-6.1/mm/usercopy.c" where the
# golden files expect "mm/usercopy.c" (docs/series.md).
VMALLOC_PROOF := $(BUILD)/vmalloc-proof
VMALLOC_TRIGGERS := USERCOPY_VMALLOC USERCOPY_VMALLOC_NO_GUARD_TO USERCOPY_VMALLOC_NO_GUARD_FROM \
	USERCOPY_VMALLOC_PERCPU_TO USERCOPY_VMALLOC_PERCPU_FROM
series-vmalloc-proof: tree initramfs
	@$(TREE_READ) scripts/kernel-config.sh $(TREE) $(VMALLOC_PROOF)/kernel-lab kernel-config/lab.config \
		kernel-config/matrix/90-smp.config
	+@CCACHE_BASEDIR= scripts/kbuild-progress.py smp $(abspath $(VMALLOC_PROOF))/kernel-lab -- \
		$(TREE_READ) $(MAKE) \
		--no-print-directory -C $(TREE) O=$(abspath $(VMALLOC_PROOF))/kernel-lab \
		CC="ccache gcc" -j$(JOBS) bzImage
	$(HARNESS) run --build-dir $(VMALLOC_PROOF) --initramfs $(INITRAMFS) --results $(MUTANT_RESULTS) \
		--suite lab $(foreach t,$(VMALLOC_TRIGGERS),--trigger $(t)) \
		--golden-overlay lab=expected-oops/smp
	CCACHE_BASEDIR= scripts/mutation-run.sh --kernel lab --suite lab \
		--golden-overlay lab=expected-oops/mutant-vmalloc-old-bound \
		$(TREE) $(VMALLOC_PROOF) $(INITRAMFS) $(MUTANT_RESULTS) \
		lkdtm-tests/mutations/vmalloc-bound-by-get-vm-area-size.patch \
		USERCOPY_VMALLOC_PERCPU_TO USERCOPY_VMALLOC_PERCPU_FROM

clean:
	rm -rf $(BUILD)/kernel-* $(BUILD)/initramfs* $(GEN_CPIO)

distclean:
	rm -rf $(BUILD) $(RESULTS)

FORCE:

# ---- make hunt: workloads written elsewhere in fallback guests (docs/hunt.md) ----
# HUNT_MINUTES of wall time with HUNT_JOBS guests at once on the hunt kernel
# (kernel-config/variant-hunt.config); HUNT_SEED replans the same guests;
# HUNT_WORKLOADS limits the workloads (initramfs-src/hunt-workloads/).
HUNT_MINUTES ?= 60
HUNT_JOBS ?= 2
HUNT_KERNEL ?= hunt
HUNT_SEED ?=
HUNT_WORKLOADS ?=
HUNT_INITRAMFS := $(BUILD)/initramfs-hunt.cpio
HUNT_SMOKE_INITRAMFS := $(BUILD)/initramfs-hunt-smoke.cpio
HUNT_SELFTESTS := $(BUILD)/hunt-selftests
HUNT_TOOLS := trinity stress-ng jfsutils e2fsprogs
# The coverage's denominator: the gap finder's sites (make gaps) for the
# lab's tree, restricted to the files the hunt kernel compiled
# (docs/hunt.md).  make hunt scans the tree when it is missing (mk/gaps.mk
# gaps-series: minutes cold); make gaps refreshes it.
HUNT_GAPS ?= $(GAPS_OUT)/$(LINE)-series/gaps.json
HUNT := $(HARNESS) hunt
# RUN/hunt/index.html from RUN/hunt/findings.json (usercopy-lab page hunt), also
# after a hunt that exits 1 (an untriaged finding); the hunt's status stands
# as the recipe's (make itself exits 2 for any failed recipe).
HUNT_PAGE = ; status=$$?; $(HARNESS) page hunt $(1) && exit $$status

.PHONY: initramfs-hunt hunt hunt-replay hunt-harvest hunt-smoke

$(HUNT_SELFTESTS)/install: scripts/hunt-selftests.sh | tree
	scripts/hunt-selftests.sh $(TREE) $(HUNT_SELFTESTS)

initramfs-hunt: initramfs $(HUNT_SELFTESTS)/install
	@scripts/install-deps.sh $(HUNT_TOOLS)
	@scripts/hunt-initramfs.sh $(GEN_CPIO) $(INITRAMFS) $(HUNT_INITRAMFS) $(HUNT_SELFTESTS)/install

hunt: initramfs-hunt
	+$(MAKE) kernel KERNEL=$(HUNT_KERNEL)
	+@test -f $(HUNT_GAPS) || $(MAKE) --no-print-directory gaps-series
	$(HUNT) run --minutes $(HUNT_MINUTES) -j $(HUNT_JOBS) --kernel $(HUNT_KERNEL) \
		--build-dir $(BUILD) --initramfs $(HUNT_INITRAMFS) --results $(RESULTS) --gaps $(HUNT_GAPS) \
		$(if $(HUNT_SEED),--seed $(HUNT_SEED)) $(foreach w,$(HUNT_WORKLOADS),--workload $(w)) \
		$(call HUNT_PAGE,$(RESULTS)/latest)

# Boots the recorded guests again: RUN=results/<run> FINDING=U-... or GUEST=g001-...
hunt-replay:
	@[ -n "$(RUN)" ] && [ -n "$(FINDING)$(GUEST)" ] || \
		{ echo "usage: make hunt-replay RUN=results/<run> FINDING=U-... | GUEST=g001-..."; exit 2; }
	$(HUNT) replay $(RUN) $(foreach f,$(FINDING),--finding $(f)) $(foreach g,$(GUEST),--guest $(g)) \
		--results $(RESULTS) --gaps $(HUNT_GAPS)

# The findings of a hunt again from its consoles (after editing
# expected-oops/hunt/classifications.toml): RUN=results/<run>
hunt-harvest:
	@[ -n "$(RUN)" ] || { echo "usage: make hunt-harvest RUN=results/<run>"; exit 2; }
	$(HUNT) harvest $(RUN) --gaps $(HUNT_GAPS) $(call HUNT_PAGE,$(RUN))

# Part of `make test`: the pipeline on the seeds kernel (which make test
# builds anyway; variant-seeds.config has the coverage probe's options):
# the calibration guest and two 12 s workloads (a 12 s stress-net runs two
# of its stress-ng specs), two at once, no selftests: 15 s wall.  The plan
# needs --minutes 1 for 12 s guests (it counts 25 s per guest besides the
# workload); with less it lengthens them to its 30 s minimum.
# HUNT_SMOKE_KERNEL=hunt runs it on the hunt kernel instead.
HUNT_SMOKE_KERNEL ?= seeds
hunt-smoke: initramfs $(BUILD)/kernel-$(HUNT_SMOKE_KERNEL)/arch/x86/boot/bzImage
	@scripts/install-deps.sh $(HUNT_TOOLS)
	@scripts/hunt-initramfs.sh $(GEN_CPIO) $(INITRAMFS) $(HUNT_SMOKE_INITRAMFS)
	@scripts/probe-offsets.sh $(BUILD)/kernel-$(HUNT_SMOKE_KERNEL) >/dev/null
	$(HUNT) run --smoke --kernel $(HUNT_SMOKE_KERNEL) --minutes 1 -j 2 --guest-seconds 12 \
		--workload stress-net --workload lab-probes --build-dir $(BUILD) \
		--initramfs $(HUNT_SMOKE_INITRAMFS) --results $(RESULTS)/hunt-smoke --gaps $(HUNT_GAPS) \
		$(call HUNT_PAGE,$(RESULTS)/hunt-smoke/latest)

include mk/gaps.mk
include mk/line-6.12.mk
include mk/anybus.mk
