"""The localhost HTTP daemon (`engram serve`): app factory, security, discovery, routes."""
