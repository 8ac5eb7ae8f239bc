"""Long-form datasets: recordings of minutes to hours with segment-level references.

A long-form dataset is an ordinary dataset (`asrbench.dataset`: metadata.tsv + dataset.yaml +
audio) whose dataset.yaml says `kind: longform`: each metadata.tsv row is one whole recording,
its TEXT the whole reference in time order (so every utterance-level path keeps working), and a
segments file beside it (`segments.seglst.json` by default, or the `segments:` key; SegLST or
STM) holds the segment-level references (session_id = the recording's ID, speaker, start, end,
words). `asrbench.longform.segments` reads and validates that file where the dataset loads.
"""
