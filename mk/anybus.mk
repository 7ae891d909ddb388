# The Anybus-S finding (issue #35, docs/findings.md): the anybus kernel is
# the seeds kernel plus the Anybus-S host driver, its Profinet client and a
# simulated controller (test-drivers/anybuss-sim.patch, test only), built
# from a copy of build/kernel-seeds by scripts/overlay-build.sh --config,
# so only what the new options reach is compiled.  Not part of `make` or
# `make test`: the first build of this kernel recompiles ~1000 objects
# (19 min at load 5-9 on the 2-core host; CONFIG_OF reaches most of the
# tree), each later one ~40 s.  mutation-anybus is the regression entry.
#
#   make suite-anybus     the probe anybus-process-data on the anybus
#                         kernel, with and without the usercopy_warn
#                         fallback: no report (patches/0012)
#   make mutation-anybus  the same kernel without patches/0012
#                         (lkdtm-tests/mutations/anybuss-task-no-region.patch):
#                         the probe must BUG / WARN as
#                         expected-oops/mutant-anybuss-no-region*/ say, and
#                         FAIL against the suites' own golden files

ANYBUS_KDIR     := $(BUILD)/kernel-anybus
ANYBUS_SIM      := test-drivers/anybuss-sim.patch
ANYBUS_CONFIG   := kernel-config/variant-anybus.config
ANYBUS_MUTATION := lkdtm-tests/mutations/anybuss-task-no-region.patch

.PHONY: suite-anybus mutation-anybus

$(ANYBUS_KDIR)/arch/x86/boot/bzImage: $(BUILD)/kernel-seeds/arch/x86/boot/bzImage FORCE
	@JOBS=$(JOBS) $(TREE_READ) scripts/overlay-build.sh --config $(ANYBUS_CONFIG) \
		$(TREE) $(BUILD)/kernel-seeds $(ANYBUS_KDIR) $(ANYBUS_SIM)

suite-anybus: $(ANYBUS_KDIR)/arch/x86/boot/bzImage initramfs
	$(HARNESS) run --build-dir $(BUILD) --initramfs $(INITRAMFS) --results $(RESULTS) \
		--suite anybus --suite anybus-fallback

# The mutant is built from the anybus kernel's folder with the simulated
# controller and the mutation applied together (the tree carries neither).
mutation-anybus: initramfs $(ANYBUS_KDIR)/arch/x86/boot/bzImage
	scripts/mutation-run.sh --kernel anybus --suite anybus --suite anybus-fallback \
		--golden-overlay anybus=expected-oops/mutant-anybuss-no-region \
		--golden-overlay anybus-fallback=expected-oops/mutant-anybuss-no-region-fallback \
		$(TREE) $(BUILD) $(INITRAMFS) $(MUTANT_RESULTS) $(ANYBUS_SIM),$(ANYBUS_MUTATION) \
		anybus-process-data
