"""The peer benchmark's parts: the contenders, the process each runs in, what is measured, the
tables. `benchmarks/bench_peers.py` runs them; `make bench-peers` builds their venv first."""
