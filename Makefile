# syncbench: reproduce every figure, one figure, test, bench.
#   make reproduce-all            quick scale (minutes on a laptop)
#   make reproduce-all SCALE=paper
#   make reproduce-all SEEDS=1    one seed per verdict (default 3 at quick scale, 5 at paper)
#   make reproduce-all MAX_SEEDS=3  no further seeds for undecided claims (default up to 5 / 7)
#   make reproduce-all JOBS=1     one binary at a time (default 2 of the simulator's at once)
#   make fig-asap-fig3            one figure (experiment + render + report)
#   make fig-mode-matrix CONFIG=experiments/configs/mode-matrix.mf.quick.toml
#                                 one figure from another configuration (--config)
#   make fig-hop-fig12-cnn         a figure's CNN version: results/<id>-cnn/ for Hop's figures
#                                 (in reproduce-all too), results/cnn/<id>/ for the others
#   make reproduce-all CNN=0       the lean build: no CNNs (asap-fig8 n.a., the DSSP figures on a proxy)
#   make test | make test-cnn | make bench | make bench-libsvm | make bench-transport | make bench-scale | make lint
#   make gpu-build                 target/gpu/syncbench with the cuda feature (LibTorch), for a GPU machine
#   make gpu-check                 on that machine: devices, profiles, ours vs PyTorch (results/gpu-check/)
#   make cluster-smoke           ps-modes and asap-fig7 as 4 local processes (cluster driver)
#   make sim-validation-cluster  sim-validation measured as 4 local processes over tcp and shm
#   make soak                    that cluster smoke 100 times per transport: failures / runs
#                                (TRANSPORT=ofi: over libfabric on tcp;ofi_rxm, shm, sockets)
#   make faults                  the fault matrix (results/faults/REPORT.md)
#   make rxe-check               the verbs backend on soft-RoCE in a QEMU guest (results/rxe-check)
#   make fuzz                    every fuzz target for 10 minutes (results/fuzz/REPORT.md)
#   make regress                 results against baselines/$(TESTBED).json (TESTBED=, BASELINE=); make
#                                exits 2 on any failure: run target/release/syncbench regress for its codes
#   make regress-accept          write that baseline from the results of a confirmed run
#   make regress-accept-hosted   write baselines/github-hosted.json (ci.yml's gate: the exact, claims
#                                and bounds tiers, no measured samples) from a clean run's results
#   make regress-selftest        the measured tiers' false-alarm rate (20 unchanged comparisons) and
#                                an injected 30% shm slowdown caught (results/regress-selftest/)
SCALE   ?= quick
SEED    ?= 1
# Seeds per verdict (empty: the binaries' default, 3 at quick scale and 5 at paper scale).
SEEDS   ?=
# The most seeds a figure runs when claims are undecided on SEEDS (empty: the binaries' default,
# 5 at quick scale and 7 at paper scale; MAX_SEEDS=$(SEEDS) runs no further seeds).
MAX_SEEDS ?=
RESULTS ?= results
# The testbed `make regress` compares on (baselines/$(TESTBED).json); empty: this host's name.
TESTBED ?=
# CNN=1 (the default): build with the CNN workloads (feature `cnn`: burn on its pure-Rust CPU
# backend), so the papers' networks train in the reproduction: asap-fig8 its VGG, and dssp-fig3
# and dssp-table1 (papers about CNNs) run on their CNN configurations (CNN_HEADLINE below).
# CNN=0: the lean build; asap-fig8 writes its claims as not applicable and the DSSP figures
# train their logistic-regression proxy.
CNN     ?= 1
CNN_ON   = $(filter-out 0 no false,$(CNN))
# TRANSPORT=ofi (make soak): the build adds the libfabric backend (feature `ofi`).
TRANSPORT ?=
# EXTRA_FEATURES: more cargo features for the release build, e.g. `--features
# experiments/rdma,experiments/ofi`, so that `make rxe-check RXE_BIN=target/release` runs the
# binaries the reproduction built instead of a second release build (the sim's bytes do not
# depend on the transports compiled in).
EXTRA_FEATURES ?=
# PREBUILT=1: no build; the targets that build (reproduce-all, report, regress, ...) run the
# binaries in BIN as they are, after checking that they are there. CI builds them once with
# the test binaries it runs (`cargo test --release ... --no-run`: a `cargo build` after it would
# unify features without the dev-dependencies and compile everything again).
PREBUILT ?=
FEATURES = $(strip $(if $(CNN_ON),--features experiments/cnn) $(if $(filter ofi,$(TRANSPORT)),--features experiments/ofi) $(EXTRA_FEATURES))
cnn_config_of = $(if $(and $(CNN_ON),$(filter $(1),$(CNN_HEADLINE))),--config experiments/configs/$(1).cnn.$(SCALE).toml)
CARGO   ?= cargo
# CONFIG=path: `make fig-<id>` runs the figure's binary on this configuration instead of its
# built-in one for SCALE (e.g. experiments/configs/mode-matrix.mf.quick.toml). The binary
# writes it into $(RESULTS)/config/<the file's name without .toml>/<id>/, beside the built-in
# run's results in $(RESULTS)/<id>/ rather than over them, unless its text is one of the
# binary's own configurations (<binary>.quick, .paper, .cnn.quick, .cnn.paper), whose results
# are the figure's.
CONFIG  ?=
BIN     := target/release
RUN_ARGS = --scale $(SCALE) --seed $(SEED) $(if $(SEEDS),--seeds $(SEEDS)) $(if $(MAX_SEEDS),--max-seeds $(MAX_SEEDS))
EXP      = $(RUN_ARGS) --out $(RESULTS)
FIGURES  = $(BIN)/figures --results $(RESULTS)
# Where `make fig-<id>`'s binary writes (the binary's own rule, above): $(RESULTS), or the
# config/<name>/ directory for a CONFIG that is none of the binary's own configurations.
own_config = $(shell for f in $(foreach s,quick paper cnn.quick cnn.paper,experiments/configs/$(1).$(s).toml); do [ -f "$$f" ] && cmp -s '$(CONFIG)' "$$f" && echo "$$f"; done)
FIG_OUT  = $(if $(and $(CONFIG),$(if $(call own_config,$(call bin_of,$(FIG))),,x)),$(RESULTS)/config/$(basename $(notdir $(CONFIG))),$(RESULTS))

# The figure catalogue (figure id, binary, extra arguments) lives in one place: experiments/figures.tsv.
CATALOG  := experiments/figures.tsv
FIGS     := $(shell awk -F'\t' '!/^\#/ && NF {print $$1}' $(CATALOG))
BINARIES := $(shell awk -F'\t' '!/^\#/ && NF && !seen[$$2]++ {print $$2}' $(CATALOG))
bin_of    = $(shell awk -F'\t' -v f='$(1)' '$$1 == f {print $$2}' $(CATALOG))
args_of   = $(shell awk -F'\t' -v f='$(1)' '$$1 == f && $$3 != "-" {print $$3}' $(CATALOG))
# Binaries whose figure the paper ran on CNNs (`cnn` in the catalogue's fourth column): with CNN
# on, reproduce-all and `make fig-<id>` run them on experiments/configs/<binary>.cnn.$(SCALE).toml
# into $(RESULTS)/<id>/ (the proxy stays the built-in configuration: CNN=0, or CONFIG=).
CNN_HEADLINE := $(shell awk -F'\t' '!/^\#/ && $$4 == "cnn" {print $$2}' $(CATALOG))
# Binaries whose figure's CNN half is a figure of its own (catalogue id <binary>-cnn, arguments
# `--cnn`): with CNN on, reproduce-all runs them a second time, into $(RESULTS)/<id>-cnn/.
CNN_HALVES := $(shell awk -F'\t' '!/^\#/ && $$3 ~ /(^| )--cnn( |$$)/ {print $$2}' $(CATALOG))

.PHONY: all build fig-one fig-cnn-dir reproduce-all regress regress-accept regress-accept-hosted regress-selftest report figures test test-cnn bench bench-cnn gpu-build gpu-check bench-libsvm bench-transport bench-scale cluster-smoke sim-validation-cluster soak faults rxe-check fuzz lint lint-workflows clean

all: reproduce-all

build:
ifneq ($(PREBUILT),)
	@for b in $(BINARIES) syncbench figures; do [ -x "$(BIN)/$$b" ] || { echo "PREBUILT: $(BIN)/$$b is not built (build it, or leave PREBUILT unset)" >&2; exit 1; }; done; \
	  echo "build: none (PREBUILT: the binaries in $(BIN) as they are)"
else
	@echo "$(CARGO) build --release --workspace --bins $(FEATURES)"; s=$$(date +%s); \
	  $(CARGO) build --release --workspace --bins $(FEATURES) || exit 1; echo "build: $$(( $$(date +%s) - s )) s"
endif

# reproduce-all runs the simulator's binaries JOBS at a time (scripts/run-jobs.sh: a binary's
# seeds share the cores, and its last seed alone leaves one idle; a second binary fills it; the
# result bytes do not depend on it), longest first, then the binaries whose results read
# wall-clock time (the threads driver) one at a time, alone. JOBS=1: one binary at a time.
JOBS       ?= 2
WALL_CLOCK := asap-fig7 ps-modes sim-validation
LONG_FIRST := dssp-fig3 essp-fig3 asap-fig8 dssp-table1
# Per results directory, so that two reproductions into different RESULTS do not share lists.
RUN_LOGS    = target/reproduce-logs/$(subst /,_,$(RESULTS))

reproduce-all: build
	@mkdir -p "$(RUN_LOGS)" && rm -f "$(RUN_LOGS)"/*.log && : > $(RUN_LOGS)/parallel.tsv && : > $(RUN_LOGS)/serial.tsv; \
	  job() { extra=""; if [ -n "$(CNN_ON)" ] && echo " $(CNN_HEADLINE) " | grep -q " $$1 "; then extra=" --config experiments/configs/$$1.cnn.$(SCALE).toml"; fi; \
	    list=parallel; if echo " $(WALL_CLOCK) " | grep -q " $$1 "; then list=serial; fi; \
	    printf '%s\t%s\n' "$$1" "$(BIN)/$$1 $(EXP)$$extra" >> $(RUN_LOGS)/$$list.tsv; }; \
	  for b in $(filter $(BINARIES),$(LONG_FIRST)); do job $$b; done; \
	  for b in $(if $(CNN_ON),$(CNN_HALVES)); do printf '%s\t%s\n' "$$b-cnn" "$(BIN)/$$b $(EXP) --cnn" >> $(RUN_LOGS)/parallel.tsv; done; \
	  for b in $(filter-out $(LONG_FIRST),$(BINARIES)); do job $$b; done; \
	  s=$$(date +%s); LOGS=$(RUN_LOGS) scripts/run-jobs.sh $(JOBS) $(RUN_LOGS)/parallel.tsv $(RUN_LOGS)/serial.tsv || exit 1; \
	  echo "experiments: $$(( $$(date +%s) - s )) s"
	@s=$$(date +%s); $(FIGURES) render && $(FIGURES) report --html || exit 1; echo "figures and report: $$(( $$(date +%s) - s )) s"
	@echo "report: $(RESULTS)/REPORT.md (one page with the figures inline: $(RESULTS)/REPORT.html)"

report: build
	$(FIGURES) render
	$(FIGURES) report --html

# Every tier (exact sim CSV bytes, claims, bounds, the measured ratio and absolute tiers) against a
# committed baseline; ABSOLUTE=info for a shared machine's baseline.
regress: build
	$(BIN)/syncbench regress --results $(RESULTS) $(if $(TESTBED),--testbed $(TESTBED)) $(if $(BASELINE),--baseline $(BASELINE)) $(if $(ABSOLUTE),--absolute $(ABSOLUTE))

regress-accept: build
	$(BIN)/syncbench regress accept --results $(RESULTS) $(if $(TESTBED),--testbed $(TESTBED)) $(if $(BASELINE),--baseline $(BASELINE)) $(if $(ABSOLUTE),--absolute $(ABSOLUTE))

# The hosted runners' baseline holds the snapshot only (--rounds 0): measured samples would be
# this machine's, and a hosted runner is another machine every run.
regress-accept-hosted: build
	$(BIN)/syncbench regress accept --results $(RESULTS) --testbed github-hosted --baseline baselines/github-hosted.json --absolute info --rounds 0

regress-selftest: build
	$(BIN)/syncbench regress selftest --repeat 20 --out $(RESULTS)/regress-selftest $(if $(ABSOLUTE),--absolute $(ABSOLUTE))

# The figure ids, one a line.
figures:
	@printf '%s\n' $(FIGS)

# A figure's CNN version, with the feature `cnn`. Hop's CNN halves in the catalogue (hop-fig12,
# hop-fig13, hop-fig14-16, hop-fig17, hop-fig18-19, hop-fig20-21: `<binary> --cnn`) are figures
# of their own, $(RESULTS)/<id>-cnn/, in `make reproduce-all` too (CNN_HALVES). The others
# (mode-matrix: every mode training a CNN; dssp-fig3 and dssp-table1, already on CNNs in
# `make fig-<id>`) run from configs/<binary>.cnn.<scale>.toml into $(RESULTS)/cnn/<id>/.
# `make fig-hop-fig12-cnn`.
fig-%-cnn:
	@$(MAKE) --no-print-directory $(if $(call bin_of,$*-cnn),fig-one FIG=$*-cnn CNN=1,fig-cnn-dir FIG=$*)

fig-cnn-dir:
	@test -f experiments/configs/$(call bin_of,$(FIG)).cnn.$(SCALE).toml || { echo "figure '$(FIG)' has no CNN version (experiments/configs/*.cnn.*.toml)" >&2; exit 2; }
	@$(MAKE) --no-print-directory build CNN=1
	$(BIN)/$(call bin_of,$(FIG)) $(EXP)/cnn --config experiments/configs/$(call bin_of,$(FIG)).cnn.$(SCALE).toml
	$(FIGURES)/cnn render --figure $(FIG)
	$(FIGURES)/cnn report

# One figure: its binary (with the arguments that make only it), its plot, the report.
# `make fig-<id>` for any id of `make figures`.
fig-%:
	@$(MAKE) --no-print-directory fig-one FIG=$*

fig-one:
	@test -n "$(call bin_of,$(FIG))" || { echo "unknown figure '$(FIG)'; 'make figures' lists them" >&2; exit 2; }
	@$(MAKE) --no-print-directory build
	$(BIN)/$(call bin_of,$(FIG)) $(RUN_ARGS) --out $(RESULTS) $(call args_of,$(FIG)) $(if $(CONFIG),--config $(CONFIG),$(call cnn_config_of,$(call bin_of,$(FIG))))
	$(BIN)/figures --results $(FIG_OUT) render --figure $(FIG)
	$(BIN)/figures --results $(FIG_OUT) report
	@echo "results: $(FIG_OUT)/"

# The CNN workloads' tests (feature `cnn`). One workspace-wide feature set for all four, so they
# share one build; CI passes CNN_FEATURES=--all-features to reuse its --all-features build.
CNN_FEATURES ?= --features experiments/cnn
test-cnn:
	$(CARGO) test --workspace $(CNN_FEATURES) --test cnn
	$(CARGO) test --workspace $(CNN_FEATURES) --test cnn_devices
	$(CARGO) test --workspace $(CNN_FEATURES) --lib -- workload::cnn
	$(CARGO) test --workspace $(CNN_FEATURES) --test experiments_cli -- cnn_
	$(CARGO) test --workspace $(CNN_FEATURES) --test datasets_cli -- cnn_

test:
	$(CARGO) test --workspace

bench:
	$(CARGO) bench -p bench-core --bench core

# perftest-style transport benchmark (threads, shm, tcp beside memcpy, a raw socket and a
# cache-line ping-pong), JSON and CSV under $(RESULTS)/.
bench-transport: build
	mkdir -p $(RESULTS)
	$(BIN)/syncbench transport-bench --json $(RESULTS)/transport-bench.json --csv $(RESULTS)/transport-bench.csv

# The simulator at scale, against the scale targets: wall time, events/s and peak memory
# against the worker count for ps-modes' SVM under SSP, the SVM on ring-based peers and
# control-only learning, each point in a process of its own, into $(RESULTS)/bench-scale/
# (figure, claims).
# Seeds are repetitions, run one at a time. Not part of reproduce-all.
bench-scale: build
	$(BIN)/bench-scale $(EXP)
	$(FIGURES) render --figure bench-scale
	$(FIGURES) report

# sim-validation with its measured runs as 4 processes on this machine (cluster driver), once
# over tcp and once over shm, each predicted over the transport it used: into
# $(RESULTS)/cluster-tcp/ and $(RESULTS)/cluster-shm/.
sim-validation-cluster: build
	$(BIN)/syncbench launch --ranks 4 -- sim-validation --driver cluster --transport tcp $(EXP)/cluster-tcp
	$(BIN)/syncbench launch --ranks 4 -- sim-validation --driver cluster --transport shm $(EXP)/cluster-shm
	$(FIGURES)/cluster-tcp render --figure sim-validation
	$(FIGURES)/cluster-shm render --figure sim-validation

# ps-modes and asap-fig7 as 4 processes on this machine (cluster driver, tcp), into $(RESULTS)/cluster/.
cluster-smoke: build
	$(BIN)/syncbench launch --ranks 4 -- ps-modes --driver cluster --scale $(SCALE) --seed $(SEED) --out $(RESULTS)/cluster
	$(BIN)/syncbench launch --ranks 4 -- asap-fig7 --driver cluster --scale $(SCALE) --seed $(SEED) --out $(RESULTS)/cluster

# Fault matrix: a 4-rank job with a rank killed at each phase, stopped, strangers, port taken;
# the table is $(RESULTS)/faults/REPORT.md.
faults: build
	$(BIN)/syncbench faults --out $(RESULTS)

# Fuzzing: every fuzz target for FUZZ_SECONDS (default 600) each, two at a time; the table is
# $(RESULTS)/fuzz/REPORT.md. `make test` runs the same targets for 2 s each.
FUZZ_SECONDS ?= 600
fuzz:
	FUZZ_SECONDS=$(FUZZ_SECONDS) OUT=$(RESULTS)/fuzz CARGO=$(CARGO) ./scripts/fuzz.sh

# Soak: the 4-rank cluster smoke of ps-modes and asap-fig7 over tcp and shm, SOAK_RUNS times each
# (default 100), then a small asap-fig7 whose peers finish at different times (the start-up race's
# trigger); prints failures / runs into $(RESULTS)/soak{,-small}/soak.md. Not part of `make test`.
# The verbs backend on a real verbs device: soft-RoCE (rdma_rxe) in a QEMU guest booted from
# Debian's kernel, running this checkout's rdma build (scripts/rxe-check.sh says what it runs).
# RXE_BIN=target/release: run the release binaries already built there (they need the rdma and
# ofi features: EXTRA_FEATURES above) instead of building target/rxe/release.
# RXE_STEPS=checks: the checks only, without the speed measurements (CI's set).
RXE_BIN ?=
RXE_STEPS ?= all
rxe-check:
	OUT=$(RESULTS)/rxe-check RXE_STEPS=$(RXE_STEPS) $(if $(RXE_BIN),BIN=$(RXE_BIN)) ./scripts/rxe-check.sh

SOAK_RUNS ?= 100
# TRANSPORT=ofi: the same over --transport ofi on each provider that runs on any machine.
SOAK_TRANSPORTS = $(if $(filter ofi,$(TRANSPORT)),ofi:tcp;ofi_rxm ofi:shm ofi:sockets,tcp shm)
soak: build
	BIN=$(BIN) OUT=$(RESULTS)/soak$(if $(TRANSPORT),-$(TRANSPORT)) SCALE=$(SCALE) TRANSPORTS="$(SOAK_TRANSPORTS)" ./scripts/soak.sh $(SOAK_RUNS)
	BIN=$(BIN) OUT=$(RESULTS)/soak-small$(if $(TRANSPORT),-$(TRANSPORT)) EXPERIMENTS=asap-fig7 TRANSPORTS="$(SOAK_TRANSPORTS)" ARGS="--config scripts/small-asap-fig7.toml" ./scripts/soak.sh $(SOAK_RUNS)

# The CNN training step vs PyTorch on the same architectures, on the CPU (PyTorch from
# scripts/torch-env.sh, about 4.6 GB in ~/.cache/syncbench): results/bench/cnn-vs-pytorch.{csv,md}.
# On a GPU: make gpu-check.
bench-cnn:
	./scripts/bench-cnn-vs-pytorch.sh

# The GPU check's one binary: syncbench with the `cuda` feature (burn's LibTorch backend, linked
# against PyTorch 2.11's libtorch: scripts/torch-env.sh installs it once), stripped, as
# target/gpu/syncbench; built in target/gpu-build/ so the CPU build is not rebuilt. Copy it (and
# the working tree) to a GPU machine with PyTorch 2.11 and run `make gpu-check` there (no cargo).
gpu-build:
	@torch_env=$$(scripts/torch-env.sh) && eval "$$torch_env" && \
	  CARGO_TARGET_DIR=target/gpu-build $(CARGO) build --release -p experiments --features experiments/cuda --bin syncbench
	mkdir -p target/gpu
	cp target/gpu-build/release/syncbench target/gpu/syncbench
	strip target/gpu/syncbench
	@ls -l target/gpu/syncbench

# On a GPU machine: devices compared, every paper model profiled, ours against PyTorch, two
# figures training on the GPU: results/gpu-check/REPORT.md (scripts/gpu-check.sh).
gpu-check:
	./scripts/gpu-check.sh

# LIBSVM reader vs scikit-learn's load_svmlight_file (pip-installs scikit-learn into target/).
bench-libsvm:
	./scripts/bench-libsvm-vs-sklearn.sh

lint: lint-workflows
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

# The workflows against GitHub's schema and zizmor's audits (both from PyPI, into a private venv).
lint-workflows:
	scripts/lint-workflows.sh

clean:
	rm -rf $(RESULTS)
