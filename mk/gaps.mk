# make gaps: the static gap finder (docs/gaps.md, issue #35).  Never part
# of make or make test (make unit-test runs its smoke on committed
# excerpts, harness/tests/test_gaps.py).
#
#   make gaps         three 6.1 trees: the lab's (series applied, $(TREE)),
#                     the pristine tarball, the pristine tree with
#                     bf1867db9b85's rds_ib_incoming region taken back;
#                     $(GAPS_OUT)/<tree>/gaps.json + gaps.md each
#   make gaps-test    make gaps, then the recall tests on its output
#                     (harness/tests/test_gaps_trees.py)
#   make gaps-series  the lab's tree only (make hunt runs it when its
#                     denominator, $(GAPS_OUT)/$(LINE)-series/gaps.json, is missing)
#
# A tree is scanned again only when a file of it, the finder or the patch
# changed ($(GAPS_OUT)/<tree>/stamp); --force in GAPS_FLAGS scans anyway.
# The pristine tree is extracted from $(TARBALL) once, into $(GAPS_PRISTINE).
# LINE=6.1 is the only line the lab has today.

LINE          ?= 6.1
GAPS_OUT      ?= $(BUILD)/gaps
GAPS_TRIAGE   ?= expected-oops/gaps/triage.toml
GAPS_PRISTINE ?= $(GAPS_OUT)/tree/linux-source-$(LINE)
GAPS_IB_MUTATION := lkdtm-tests/mutations/rds-ib-incoming-no-region.patch
GAPS_FLAGS    ?=
GAPS          := nice -n 19 $(PYTHON) -m usercopy_lab gaps --triage $(GAPS_TRIAGE) $(GAPS_FLAGS)

.PHONY: gaps gaps-test gaps-series

$(GAPS_PRISTINE)/Makefile:
	@test -f $(TARBALL) || { echo "gaps: $(TARBALL) not found (apt install linux-source-$(LINE))"; exit 2; }
	mkdir -p $(dir $(GAPS_PRISTINE))
	nice -n 19 tar -xJf $(TARBALL) -C $(dir $(GAPS_PRISTINE))
	@test -f $@

# Each tree's status is kept until all three ran, then the worst is the
# recipe's (1 untriaged, 2 bad input); make itself then exits 2 for either.
gaps: $(GAPS_PRISTINE)/Makefile
	@test -f $(TREE)/Makefile || { echo "gaps: $(TREE) is not there (make tree)"; exit 2; }
	@rc=0; \
	$(GAPS) --tree $(TREE) --out $(GAPS_OUT)/$(LINE)-series --label "$(LINE) + series ($(TREE))" || rc=$$?; \
	$(GAPS) --tree $(GAPS_PRISTINE) --out $(GAPS_OUT)/$(LINE)-pristine \
		--label "$(LINE) pristine ($(TARBALL))" || rc=$$?; \
	$(GAPS) --tree $(GAPS_PRISTINE) --out $(GAPS_OUT)/$(LINE)-ib-no-region --patch $(GAPS_IB_MUTATION) \
		--base $(GAPS_OUT)/$(LINE)-pristine \
		--label "$(LINE) pristine + $(GAPS_IB_MUTATION)" || rc=$$?; \
	exit $$rc

# The lab's tree alone: make hunt's denominator (HUNT_GAPS, docs/hunt.md)
# when it is missing; an untriaged candidate does not stop the hunt.
gaps-series:
	@test -f $(TREE)/Makefile || { echo "gaps: $(TREE) is not there (make tree)"; exit 2; }
	$(GAPS) --tree $(TREE) --out $(GAPS_OUT)/$(LINE)-series --label "$(LINE) + series ($(TREE))" \
		|| test -f $(GAPS_OUT)/$(LINE)-series/gaps.json

# The tests judge the output whatever make gaps exited with (an untriaged
# candidate is one of their failures, with its name).
gaps-test:
	-@$(MAKE) --no-print-directory gaps
	USERCOPY_LAB_GAPS_OUT=$(abspath $(GAPS_OUT)) nice -n 19 $(PYTHON) -m pytest -q harness/tests/test_gaps_trees.py
