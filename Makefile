# Benchmarks (not part of the test suite): SIZES=10k,100k, PEERS=1 to add the peers.
SIZES ?= 10k

.PHONY: bench
bench:
	@. scripts/setup.sh && python scripts/bench/run.py --sizes $(SIZES) $(if $(PEERS),--peers,)

# Recall quality on the labeled set in scripts/recall_eval: kin-memory against the bm25s library and a
# word-count baseline (nDCG@5, MRR@5, Recall@5, workspace leaks). Installs the `eval` extra when missing.
.PHONY: recall-eval
recall-eval:
	@. scripts/setup.sh && { python -c 'import bm25s' 2>/dev/null || pip install -q -e '.[eval]'; } && \
		python scripts/recall_eval/run.py $(ARGS)
