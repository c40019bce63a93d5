"""The lab's bundled data, shipped in the package as `minilib.data`.

Everything here is written by the scripts in `scripts/` (`make data`), never by hand.
"""
