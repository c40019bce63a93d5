"""The lab's bundled data, shipped in the package as `minilib.data`.

What is long and derived from the bundled session is written by the scripts in
`scripts/` (`make data`), never by hand: the session and its workspace, the recall
session, the session as a transcript (transcripts/m3_release_check.json) and the
grounding look-ups. The rest is small and readable, so the committed file is its own
source: the planted facts, the prompt sections, the other transcripts and the logs in
each agent's shape (logs/). Tests load and replay every file.
"""
