"""`engram serve`: the localhost HTTP daemon."""
