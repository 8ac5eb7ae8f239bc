"""Streaming and latency (issue 27): a program fed audio in real time, and what it emits when.

framing.py   the wire format of the streaming contract (models/README.md): framed PCM in,
             JSON-line events out
program.py   starting a card's `streaming:` program: in its Docker image (`docker run -i`,
             no network) or with the local runner's virtualenv
feed.py      the paced feed: chunks sent on an absolute-deadline clock, every event recorded
             with wall-clock and audio-clock times, the pacing's own accuracy measured
metrics.py   pure functions: latencies, stability, word emission latency, cursor lag, RTF,
             pooled with CIs
align.py     reference word times: a forced alignment of each reference (PocketSphinx),
             cached per dataset; the energy bounds that check it
match.py     which reference words each partial and final got right (the scorer's alignment)
capacity.py  how many simultaneous paced streams a model sustains on this machine
record.py    re-exports the stream and capacity records (asrbench/results/records.py)
run.py       one streaming cell: feed, score the finals, write results/streaming/...
"""
