# syncbench: reproduce every figure, one figure, test, bench.
#   make reproduce-all            quick scale (minutes on a laptop)
#   make reproduce-all SCALE=paper
#   make fig-asap-fig3            one figure (experiment + render + report)
#   make test | make bench | make bench-libsvm | make bench-transport | make lint
#   make cluster-smoke           ps-modes and asap-fig7 as 4 local processes (cluster driver)
#   make soak                    that cluster smoke 100 times per transport: failures / runs
#   make faults                  the fault matrix (results/faults/REPORT.md)
#   make fuzz                    every fuzz target for 10 minutes (results/fuzz/REPORT.md)
SCALE   ?= quick
SEED    ?= 1
RESULTS ?= results
CARGO   ?= cargo
BIN     := target/release
EXP      = --scale $(SCALE) --seed $(SEED) --out $(RESULTS)
FIGURES  = $(BIN)/figures --results $(RESULTS)

FIGS := asap-fig3 asap-fig10 asap-fig6 asap-fig7 asap-fig9 essp-fig2-staleness essp-fig2-breakdown essp-fig3 dssp-fig3 dssp-table1 \
        async-fig3 async-fig4 async-fig5 async-fig6 async-fig7 async-fig8 async-table3 hop-table1 hop-fig12 hop-fig13 hop-fig14-16 hop-fig17 hop-fig18-19 hop-fig20-21 ps-modes

.PHONY: all build reproduce-all report test bench bench-libsvm bench-transport cluster-smoke soak faults fuzz lint clean $(addprefix fig-,$(FIGS))

all: reproduce-all

build:
	$(CARGO) build --release --workspace --bins

reproduce-all: build
	$(BIN)/asap-spectral-gap $(EXP)
	$(BIN)/asap-fig6 $(EXP)
	$(BIN)/asap-fig7 $(EXP)
	$(BIN)/asap-fig9 $(EXP)
	$(BIN)/essp-fig2-staleness $(EXP)
	$(BIN)/essp-fig2-breakdown $(EXP)
	$(BIN)/essp-fig3 $(EXP)
	$(BIN)/dssp-fig3 $(EXP)
	$(BIN)/dssp-table1 $(EXP)
	$(BIN)/async-fig3-4 $(EXP)
	$(BIN)/async-fig5-6 $(EXP)
	$(BIN)/async-fig7-8 $(EXP)
	$(BIN)/hop-table1 $(EXP)
	$(BIN)/hop-fig12 $(EXP)
	$(BIN)/hop-fig13 $(EXP)
	$(BIN)/hop-fig14-16 $(EXP)
	$(BIN)/hop-fig17 $(EXP)
	$(BIN)/hop-fig18-19 $(EXP)
	$(BIN)/hop-fig20-21 $(EXP)
	$(BIN)/ps-modes $(EXP)
	$(FIGURES) render
	$(FIGURES) report
	@echo "report: $(RESULTS)/REPORT.md"

report: build
	$(FIGURES) render
	$(FIGURES) report

fig-asap-fig3: build
	$(BIN)/asap-spectral-gap $(EXP) --figure asap-fig3
	$(FIGURES) render --figure asap-fig3
	$(FIGURES) report

fig-asap-fig10: build
	$(BIN)/asap-spectral-gap $(EXP) --figure asap-fig10
	$(FIGURES) render --figure asap-fig10
	$(FIGURES) report

fig-asap-fig6: build
	$(BIN)/asap-fig6 $(EXP)
	$(FIGURES) render --figure asap-fig6
	$(FIGURES) report

fig-asap-fig7: build
	$(BIN)/asap-fig7 $(EXP)
	$(FIGURES) render --figure asap-fig7
	$(FIGURES) report

fig-asap-fig9: build
	$(BIN)/asap-fig9 $(EXP)
	$(FIGURES) render --figure asap-fig9
	$(FIGURES) report

fig-essp-fig2-staleness: build
	$(BIN)/essp-fig2-staleness $(EXP)
	$(FIGURES) render --figure essp-fig2-staleness
	$(FIGURES) report

fig-essp-fig2-breakdown: build
	$(BIN)/essp-fig2-breakdown $(EXP)
	$(FIGURES) render --figure essp-fig2-breakdown
	$(FIGURES) report

fig-essp-fig3: build
	$(BIN)/essp-fig3 $(EXP)
	$(FIGURES) render --figure essp-fig3
	$(FIGURES) report

fig-dssp-fig3: build
	$(BIN)/dssp-fig3 $(EXP)
	$(FIGURES) render --figure dssp-fig3
	$(FIGURES) report

fig-dssp-table1: build
	$(BIN)/dssp-table1 $(EXP)
	$(FIGURES) render --figure dssp-table1
	$(FIGURES) report

fig-async-fig3: build
	$(BIN)/async-fig3-4 $(EXP)
	$(FIGURES) render --figure async-fig3
	$(FIGURES) report

fig-async-fig4: build
	$(BIN)/async-fig3-4 $(EXP)
	$(FIGURES) render --figure async-fig4
	$(FIGURES) report

fig-async-fig5: build
	$(BIN)/async-fig5-6 $(EXP)
	$(FIGURES) render --figure async-fig5
	$(FIGURES) report

fig-async-fig6: build
	$(BIN)/async-fig5-6 $(EXP)
	$(FIGURES) render --figure async-fig6
	$(FIGURES) report

fig-async-fig7: build
	$(BIN)/async-fig7-8 $(EXP)
	$(FIGURES) render --figure async-fig7
	$(FIGURES) report

fig-async-fig8: build
	$(BIN)/async-fig7-8 $(EXP)
	$(FIGURES) render --figure async-fig8
	$(FIGURES) report

fig-async-table3: build
	$(BIN)/async-fig7-8 $(EXP)
	$(FIGURES) render --figure async-table3
	$(FIGURES) report

fig-hop-table1: build
	$(BIN)/hop-table1 $(EXP)
	$(FIGURES) render --figure hop-table1
	$(FIGURES) report

fig-hop-fig12: build
	$(BIN)/hop-fig12 $(EXP)
	$(FIGURES) render --figure hop-fig12
	$(FIGURES) report

fig-hop-fig13: build
	$(BIN)/hop-fig13 $(EXP)
	$(FIGURES) render --figure hop-fig13
	$(FIGURES) report

fig-hop-fig14-16: build
	$(BIN)/hop-fig14-16 $(EXP)
	$(FIGURES) render --figure hop-fig14-16
	$(FIGURES) report

fig-hop-fig17: build
	$(BIN)/hop-fig17 $(EXP)
	$(FIGURES) render --figure hop-fig17
	$(FIGURES) report

fig-hop-fig18-19: build
	$(BIN)/hop-fig18-19 $(EXP)
	$(FIGURES) render --figure hop-fig18-19
	$(FIGURES) report

fig-hop-fig20-21: build
	$(BIN)/hop-fig20-21 $(EXP)
	$(FIGURES) render --figure hop-fig20-21
	$(FIGURES) report

fig-ps-modes: build
	$(BIN)/ps-modes $(EXP)
	$(FIGURES) render --figure ps-modes
	$(FIGURES) report

test:
	$(CARGO) test --workspace

bench:
	$(CARGO) bench -p bench-core --bench core

# perftest-style transport benchmark (threads, shm, tcp beside memcpy, a raw socket and a
# cache-line ping-pong), JSON and CSV under $(RESULTS)/.
bench-transport: build
	mkdir -p $(RESULTS)
	$(BIN)/syncbench transport-bench --json $(RESULTS)/transport-bench.json --csv $(RESULTS)/transport-bench.csv

# ps-modes and asap-fig7 as 4 processes on this machine (cluster driver, tcp), into $(RESULTS)/cluster/.
cluster-smoke: build
	$(BIN)/syncbench launch --ranks 4 -- ps-modes --driver cluster --scale $(SCALE) --seed $(SEED) --out $(RESULTS)/cluster
	$(BIN)/syncbench launch --ranks 4 -- asap-fig7 --driver cluster --scale $(SCALE) --seed $(SEED) --out $(RESULTS)/cluster

# Fault matrix: a 4-rank job with a rank killed at each phase, stopped, strangers, port taken;
# the table is $(RESULTS)/faults/REPORT.md (about a minute).
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
SOAK_RUNS ?= 100
soak: build
	BIN=$(BIN) OUT=$(RESULTS)/soak SCALE=$(SCALE) ./scripts/soak.sh $(SOAK_RUNS)
	BIN=$(BIN) OUT=$(RESULTS)/soak-small EXPERIMENTS=asap-fig7 ARGS="--config scripts/soak-asap-small.toml" ./scripts/soak.sh $(SOAK_RUNS)

# LIBSVM reader vs scikit-learn's load_svmlight_file (pip-installs scikit-learn into target/).
bench-libsvm:
	./scripts/bench-libsvm-vs-sklearn.sh

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

clean:
	rm -rf $(RESULTS)
