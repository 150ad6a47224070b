# Benchmarks (not part of the test suite): SIZES=10k,100k, PEERS=1 to add the peers.
SIZES ?= 10k

.PHONY: bench
bench:
	.venv/bin/python scripts/bench/run.py --sizes $(SIZES) $(if $(PEERS),--peers,)
