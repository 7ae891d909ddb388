# ---- The 6.12 line (issue #34; docs/line-6.12.md) ----
# Debian's current kernel, linux-source-6.12 (6.12.118), beside the 6.1 one:
#
#   make line-6.12             both 6.12 kernels, then the stock-6.12 and
#                              series-6.12 suites (suites.toml)
#   make kernels-6.12          the stock and the patched 6.12 kernel
#   make series-6.12-check     every prefix of patches-6.12/series applies and
#                              compiles what it changes; checkpatch --strict
#   make series-6.12-export    the fixes (0001 RDS, 0002 vmalloc) as mails of
#                              their own, each git am'ed alone onto the
#                              pristine files and built alone
#   make whitelists-6.12       docs/whitelists-6.1-6.12.md from the two audits
#
# `make kernels` (so `make` and `make test`) builds both 6.12 kernels, and
# the stock-6.12 and series-6.12 suites run with every other suite; cold,
# the line adds about 13 min on an idle 2-core machine (docs/line-6.12.md).
#
# The stock kernel (build/kernel-612stock) is the tarball + the lab's LKDTM
# tests (patches-6.12/stock/series), configured with
# kernel-config/line-6.12/lab.config + variant-seeds.config.  The patched
# kernel (build/kernel-612series) is the stock build copied and rebuilt with
# the rest of patches-6.12/series applied (scripts/overlay-build.sh):
# only what the fixes touch is compiled, then vmlinux is relinked.

TARBALL_612  ?= /usr/src/linux-source-6.12.tar.xz
TREE_612     := $(BUILD)/linux-source-6.12
SERIES_612   := patches-6.12
CONFIG_612   := kernel-config/line-6.12/lab.config kernel-config/variant-seeds.config
KDIR_612STOCK  := $(BUILD)/kernel-612stock
KDIR_612SERIES := $(BUILD)/kernel-612series
IMAGE_612STOCK  := $(KDIR_612STOCK)/arch/x86/boot/bzImage
IMAGE_612SERIES := $(KDIR_612SERIES)/arch/x86/boot/bzImage
# The lab's LKDTM tests on 6.12: lkdtm-tests/ as they are (make unit-test
# checks it with scripts/lkdtm-patch.sh --check), plus a header of its own.
LKDTM_612 := 0005-lkdtm-usercopy-Add-the-usercopy-lab-tests-of-real-ca.patch
# The series' patches that the stock tree does not carry (all but the tests).
series_612_names = $(shell sed -e 's/\#.*//' -e 's|.*/||' $(1))
OVERLAY_612 := $(addprefix $(SERIES_612)/,$(filter-out \
	$(call series_612_names,$(SERIES_612)/stock/series),$(call series_612_names,$(SERIES_612)/series)))

.PHONY: deps-6.12 tree-6.12 kernels-6.12 line-6.12 series-6.12-check series-6.12-export \
	whitelists-6.12

# linux-config-6.12 (Debian's own configurations of the kernel) comes with
# linux-source-6.12; kernel-config/line-6.12/lab.config says what was read
# from it.
deps-6.12: deps
	@scripts/install-deps.sh --only linux-source-6.12 linux-config-6.12

tree-6.12: deps-6.12
	@scripts/prepare-tree.sh $(TARBALL_612) $(TREE_612) $(SERIES_612)/stock

define kbuild_stamp_inputs_612
	--file $(TREE_612).stamp --stat $(TREE_612).stamp --tree $(TREE_612) \
	$(foreach f,$(CONFIG_612),--file $(f)) \
	--file scripts/kernel-config.sh --file scripts/kconfig-lib.sh \
	--stat $(KDIR_612STOCK)/.config --stat $(IMAGE_612STOCK) \
	--text "CC=$(KBUILD_CC) $$(gcc --version | head -n 1)"
endef

$(IMAGE_612STOCK): tree-6.12 FORCE
	+@if [ -z "$(KBUILD_FORCE)" ] && why=$$(scripts/build-stamp.py check \
		$(KDIR_612STOCK)/.lab-build-stamp $(kbuild_stamp_inputs_612)); then \
		echo "kernel: $(KDIR_612STOCK) up to date (build stamp; KBUILD_FORCE=1 runs kbuild)"; \
		exit 0; fi; \
	echo "kernel 612stock: kbuild runs ($$why)"; \
	rm -f $(KDIR_612STOCK)/.lab-build-stamp; \
	scripts/kernel-config.sh $(TREE_612) $(KDIR_612STOCK) $(CONFIG_612) && \
	scripts/kbuild-progress.py 612stock $(BUILD_ABS)/kernel-612stock -- $(MAKE) \
		--no-print-directory -C $(TREE_612) O=$(BUILD_ABS)/kernel-612stock \
		CC="$(KBUILD_CC)" -j$(JOBS) bzImage && \
	scripts/build-stamp.py write $(KDIR_612STOCK)/.lab-build-stamp $(kbuild_stamp_inputs_612) && \
	echo "kernel: $@"

$(IMAGE_612SERIES): $(IMAGE_612STOCK) FORCE
	@JOBS=$(JOBS) scripts/overlay-build.sh $(TREE_612) $(KDIR_612STOCK) $(KDIR_612SERIES) \
		$(OVERLAY_612)

kernels-6.12: $(IMAGE_612STOCK) $(IMAGE_612SERIES)
kernels: kernels-6.12

line-6.12: kernels-6.12 initramfs
	$(HARNESS) run --build-dir $(BUILD) --initramfs $(INITRAMFS) --results $(RESULTS) \
		--suite stock-6.12 --suite series-6.12

series-6.12-check: tree-6.12
	scripts/series-6.12.sh check $(TARBALL_612) $(SERIES_612) $(BUILD)/series-6.12 $(CONFIG_612)

series-6.12-export: tree-6.12
	scripts/series-6.12.sh export $(TARBALL_612) $(SERIES_612) $(BUILD)/series-6.12 $(CONFIG_612)

# The whitelist audit on both lines (initramfs-src/audit-slab-caches in a
# guest of the 6.1 seeds kernel and of the stock 6.12 kernel), then the
# table of what changed between them.
WHITELISTS_612 := docs/whitelists-6.1-6.12.md
whitelists-6.12: kernels-6.12 $(BUILD)/kernel-seeds/arch/x86/boot/bzImage initramfs
	$(HARNESS) run --build-dir $(BUILD) --initramfs $(INITRAMFS) \
		--results $(RESULTS)/whitelists-6.1 --suite seeds --check audit-slab-caches
	$(HARNESS) run --build-dir $(BUILD) --initramfs $(INITRAMFS) \
		--results $(RESULTS)/whitelists-6.12 --suite stock-6.12 --check audit-slab-caches
	$(PYTHON) scripts/whitelist-table.py --old-name 6.1 --new-name 6.12 \
		$(RESULTS)/whitelists-6.1/latest/seeds/audit-slab-caches.log \
		$(RESULTS)/whitelists-6.12/latest/stock-6.12/audit-slab-caches.log > $(WHITELISTS_612).new
	mv $(WHITELISTS_612).new $(WHITELISTS_612)
