# Benchmarks (issue 7). PYTHON defaults to the project virtualenv when there is one.
PYTHON ?= $(if $(wildcard .venv/bin/python),.venv/bin/python,python3)
BENCH_OUT ?= bench-out

.PHONY: bench bench-quick

# 1k, 5k, 10k, 50k generated beliefs, the shared real networks, a 100k chain and a 50k fan,
# each against mkdocs build; rebuild timings at 10k. About 12 minutes on 2 CPUs.
bench:
	$(PYTHON) bench/run.py --out $(BENCH_OUT)

# 1k generated beliefs and the shared real networks only (about a minute).
bench-quick:
	$(PYTHON) bench/run.py --quick --out $(BENCH_OUT)
